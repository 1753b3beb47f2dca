"""Where glm1m reaches into Chainlit instead of using a public hook, what it relies on, checked on
the installed Chainlit (not its version string): a release that changes it fails here before a
user meets the difference. Why no public hook does each is said beside the code.

1. file_only.install wraps chainlit.socket.process_message, which names the chat;
2. login.py replaces decode_jwt where Chainlit looks it up, calls its /login route, and wraps
   the socket's event handlers;
3. upload_guard.py mounts POST /project/file in front of Chainlit's own;
4. storage.mount_first puts routes ahead of Chainlit's catch-all page;
5. status.stop_line corrects the line Chainlit's stop handler sends itself;
6. history_schema.py mirrors the tables Chainlit's SQLAlchemyDataLayer writes;
7. stoppable.as_task runs an action's work as the session's current task.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chainlit.auth
import chainlit.server
import chainlit.socket
import jwt
import pytest
from chainlit.chat_context import chat_context
from chainlit.config import config
from chainlit.context import init_http_context
from chainlit.element import Audio, CustomElement, Image, Pdf, Text, Video
from chainlit.message import Message
from chainlit.session import WebsocketSession
from chainlit.step import Step
from chainlit.types import Feedback, Pagination, ThreadFilter
from chainlit.user import User
from fastapi import APIRouter, FastAPI, HTTPException, Response, UploadFile
from fastapi.routing import APIRoute
from fastapi.security import OAuth2PasswordRequestForm
from fastapi.testclient import TestClient
from sqlalchemy import event
from starlette.requests import Request
from starlette.routing import BaseRoute

from glm1m.chainlit_app import file_only
from glm1m.chainlit_app.history import open_history
from glm1m.chainlit_app.history_schema import TABLES
from glm1m.chainlit_app.i18n import EN, t
from glm1m.chainlit_app.login import CREDENTIAL
from glm1m.chainlit_app.status import CHAINLIT_STOPPED
from glm1m.chainlit_app.storage import LocalStorage, mount_first
from glm1m.settings import Settings

SECRET = "a-test-secret-of-at-least-32-bytes-for-hs256"


@dataclass
class Socket:
    """A socket session as Chainlit's connect handler makes one, with what it emits kept."""
    session: WebsocketSession
    emitted: list[tuple[str, Any]] = field(default_factory=list)

    def events(self, name: str) -> list[Any]:
        return [data for event_name, data in self.emitted if event_name == name]


@pytest.fixture
async def socket() -> AsyncIterator[Socket]:
    emitted: list[tuple[str, Any]] = []

    async def emit(event_name: str, data: Any) -> None:
        emitted.append((event_name, data))

    async def emit_call(event_name: str, data: Any, timeout: int | None) -> None:
        return None

    session = WebsocketSession(id=str(uuid.uuid4()), socket_id=f"sid-{uuid.uuid4()}",
                               emit=emit, emit_call=emit_call,  # type: ignore[arg-type]
                               user_env={}, client_type="webapp")
    yield Socket(session, emitted)
    await session.delete()


async def with_spawned(work: Awaitable[Any]) -> None:
    """Run work and every task it starts (Chainlit sends and persists from fire-and-forget tasks)."""
    before = asyncio.all_tasks()
    await work
    while spawned := asyncio.all_tasks() - before - {asyncio.current_task()}:
        await asyncio.gather(*spawned)


def api_routes(routes: list[BaseRoute]) -> Iterator[APIRoute]:
    """In matching order; FastAPI 0.165 keeps an included router whole (original_router)."""
    for each in routes:
        if isinstance(each, APIRoute):
            yield each
        elif (included := getattr(each, "original_router", None)) is not None:
            yield from api_routes(included.routes)


def route(app: FastAPI, path: str, method: str) -> APIRoute:
    [found] = [r for r in api_routes(app.router.routes) if r.path == path and method in (r.methods or ())]
    return found


# 1. file_only.py
async def test_a_message_of_files_alone_names_the_chat_after_them(
        socket: Socket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chainlit.socket, "process_message", chainlit.socket.process_message)
    file_only.install()  # undone by monkeypatch after the test
    received: list[Message] = []

    async def on_message(message: Message) -> None:
        received.append(message)

    monkeypatch.setattr(config.code, "on_message", on_message)
    table = tmp_path / "terms.csv"
    table.write_text("term\nlease\n")
    socket.session.files["f1"] = {"id": "f1", "path": table, "name": "terms.csv",
                                  "type": "text/csv", "size": table.stat().st_size}
    payload = {"message": {"id": str(uuid.uuid4()), "threadId": socket.session.thread_id,
                           "name": "User", "type": "user_message", "output": "",
                           "createdAt": "2026-01-01T00:00:00Z"},
               # "gone": a file attached before "New Chat", uploaded to the socket session before
               "fileReferences": [{"id": "f1"}, {"id": "gone"}]}

    # The socket's client_message handler looks process_message up at each message.
    await with_spawned(chainlit.server.sio.handlers["/"]["client_message"](
        socket.session.socket_id, payload))

    [message] = received
    named = t(EN, "attached", names="terms.csv")
    metadata = message.metadata or {}
    assert message.content == named and metadata[file_only.FILES_ONLY] == named
    # Chainlit drops the reference its session never received, without a word: glm1m counts it.
    assert [e.name for e in message.elements] == ["terms.csv"]
    assert metadata[file_only.FILES_LOST] == 1
    # The chat is named after the first message's text: the page's stop button needs a name.
    assert [e["interaction"] for e in socket.events("first_interaction")] == [named]


# 2. login.py
async def test_every_login_chainlit_checks_goes_through_the_decode_jwt_glm1m_replaces(
        socket: Socket, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHAINLIT_AUTH_SECRET", SECRET)
    token = chainlit.auth.create_jwt(User(identifier="alice", metadata={CREDENTIAL: "c1"}))
    decoded = chainlit.auth.decode_jwt(token)  # decode_jwt(token) -> User, metadata kept
    assert (decoded.identifier, decoded.metadata[CREDENTIAL]) == ("alice", "c1")
    forged = jwt.encode({"identifier": "alice", "metadata": {}}, SECRET[::-1], algorithm="HS256")
    with pytest.raises(jwt.InvalidTokenError):  # what glm1m raises for an outdated login too
        chainlit.auth.decode_jwt(forged)

    seen: list[str] = []

    def outdated(token: str) -> User:
        seen.append(token)
        raise jwt.InvalidTokenError("the password changed")

    monkeypatch.setattr(chainlit.auth, "require_login", lambda: True)
    monkeypatch.setattr(chainlit.socket, "require_login", lambda: True)
    monkeypatch.setattr(chainlit.auth, "decode_jwt", outdated)
    monkeypatch.setattr(chainlit.server, "decode_jwt", outdated)
    # Every HTTP route's dependency, looked up when it runs.
    with pytest.raises(HTTPException) as refused:
        await chainlit.auth.get_current_user(token)
    assert refused.value.status_code == 401
    # The socket's connect.
    with pytest.raises(ConnectionRefusedError):
        await chainlit.socket.connect("sid-refused", {"HTTP_COOKIE": f"access_token={token}"},
                                      {"sessionId": str(uuid.uuid4()), "clientType": "webapp"})
    # POST /auth/jwt.
    assert route(chainlit.server.app, "/auth/jwt", "POST").endpoint is chainlit.server.jwt_auth
    request = Request({"type": "http", "method": "POST", "path": "/auth/jwt",
                       "headers": [(b"authorization", f"Bearer {token}".encode())]})
    with pytest.raises(HTTPException) as refused:
        await chainlit.server.jwt_auth(request)
    assert refused.value.status_code == 401 and seen == [token] * 3

    # The socket's handlers are called (sid, ...), and its session keeps the login's token.
    handlers = chainlit.server.sio.handlers["/"]
    assert {"client_message", "stop", "edit_message", "chat_settings_change"} <= set(handlers)
    for name, handler in handlers.items():
        assert next(iter(inspect.signature(handler).parameters)) == "sid", name
    socket.session.token = token
    assert WebsocketSession.get(socket.session.socket_id).token == token


async def test_chainlits_login_route_answers_a_wrong_password_with_401(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """login_router calls it (request, response, form_data) and counts a failure by its 401."""
    assert route(chainlit.server.app, "/login", "POST").endpoint is chainlit.server.login
    assert list(inspect.signature(chainlit.server.login).parameters) == [
        "request", "response", "form_data"]

    async def wrong_password(username: str, password: str) -> User | None:
        return None

    monkeypatch.setattr(config.code, "password_auth_callback", wrong_password)
    request = Request({"type": "http", "method": "POST", "path": "/login", "headers": []})
    with pytest.raises(HTTPException) as refused:
        await chainlit.server.login(request, Response(),
                                    OAuth2PasswordRequestForm(username="alice", password="x"))
    assert refused.value.status_code == 401


# 3. upload_guard.py (and what it sets in config)
async def test_chainlit_still_takes_uploads_at_the_route_upload_guard_stands_in_front_of(
        socket: Socket) -> None:
    upload = route(chainlit.server.app, "/project/file", "POST")
    assert upload.endpoint is chainlit.server.upload_file
    parameters = inspect.signature(chainlit.server.upload_file).parameters
    assert list(parameters) == ["current_user", "session_id", "file", "ask_parent_id"]
    # An UploadFile parameter: FastAPI reads the whole body before Chainlit's checks run.
    assert parameters["file"].annotation in (UploadFile, "UploadFile")
    assert parameters["current_user"].annotation in (chainlit.server.UserParam, "UserParam")
    spontaneous = config.features.spontaneous_file_upload
    assert spontaneous is not None and {"accept", "max_size_mb"} <= set(type(spontaneous).model_fields)
    # The guard finds the uploader's session by the id the page sends, and its page's language.
    assert WebsocketSession.get_by_id(socket.session.id) is socket.session
    assert socket.session.language == "en-US"  # from the socket's Accept-Language; this default


# 4. storage.py, and the same order for upload_guard's and login's routes
def test_routes_mounted_first_answer_before_chainlits_page_and_its_own(tmp_path: Path) -> None:
    app = FastAPI()
    app.router.routes.extend(chainlit.server.app.router.routes)  # Chainlit's, in its order
    *_, catch_all = api_routes(app.router.routes)
    assert catch_all.path == "/{full_path:path}"
    assert catch_all.methods == {"GET"}
    late, first = APIRouter(), APIRouter()

    @late.get("/glm1m/files/{key:path}")
    async def too_late(key: str) -> str:
        return "glm1m"

    @first.get("/glm1m/first/{key:path}")
    async def files(key: str) -> str:
        return "glm1m"

    @first.post("/project/file")
    async def guard() -> str:
        return "guard"

    app.include_router(late)  # as Chainlit's documentation adds a route: after its page
    mount_first(app, first)
    client = TestClient(app)
    page = client.get("/glm1m/files/alice/1/report.pdf")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert client.get("/glm1m/first/alice/1/report.pdf").json() == "glm1m"
    assert client.post("/project/file").json() == "guard"


# 5. status.py
async def test_chainlits_stop_handler_sends_its_english_line_before_on_stop(
        socket: Socket, monkeypatch: pytest.MonkeyPatch) -> None:
    work = asyncio.create_task(asyncio.Event().wait())
    socket.session.current_task = work
    seen: list[tuple[list[str], bool]] = []

    async def on_stop() -> None:
        seen.append(([m.content for m in chat_context.get()], work.cancelling() > 0))

    monkeypatch.setattr(config.code, "on_stop", on_stop)
    await with_spawned(chainlit.server.sio.handlers["/"]["stop"](socket.session.socket_id))
    assert [step["output"] for step in socket.events("new_message")] == [CHAINLIT_STOPPED]
    # on_stop runs after it, finds it in the chat context, and the task is already cancelled.
    assert seen == [([CHAINLIT_STOPPED], True)]
    with pytest.raises(asyncio.CancelledError):
        await work
    assert 'Message(content="Task manually stopped.")' in inspect.getsource(chainlit.socket.stop)


# 6. history_schema.py
async def test_chainlits_data_layer_writes_and_reads_exactly_the_columns_glm1m_creates(
        tmp_path: Path) -> None:
    layer = open_history(Settings(data_dir=tmp_path / "data", _env_file=None),
                         LocalStorage(tmp_path / "data" / "files"))
    statements: list[str] = []
    failures: list[BaseException] = []
    event.listen(layer.engine.sync_engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *rest: statements.append(statement))
    event.listen(layer.engine.sync_engine, "handle_error",
                 lambda context: failures.append(context.original_exception))
    try:
        user = await layer.create_user(User(identifier="alice", metadata={"provider": "password"}))
        assert user is not None
        thread_id = str(uuid.uuid4())
        init_http_context(thread_id=thread_id)
        await layer.update_thread(thread_id, name="Lease", user_id=user.id, tags=["pdf"],
                                  metadata={"chat_settings": {}})
        # Every attribute Chainlit's own step and message objects store, set.
        question = Message("What is the rent?", author="alice", type="user_message",
                           language="en", tags=["q"], command="ask", modes={"model": "glm"})
        question.wait_for_answer, question.is_error = False, False
        tool = Step(name="reader", type="tool", parent_id=question.id, tags=["t"], language="json",
                    icon="book", default_open=True, auto_collapse=True, show_input="json")
        tool.input, tool.output, tool.start, tool.end = "{}", "4 pages", "2026-01-01", "2026-01-01"
        tool.created_at = "2026-01-01T00:00:00Z"
        for step in (question.to_dict(), tool.to_dict()):
            await layer.create_step(step)
        for element in (Pdf(name="lease.pdf", content=b"%PDF", page=2, chainlit_key="k"),
                        Text(name="notes.txt", content="clause 4", language="text"),
                        Audio(name="a.mp3", content=b"id3", auto_play=True),
                        Video(name="v.mp4", content=b"mp4", player_config={"muted": True}),
                        Image(name="i.png", content=b"png", size="large"),
                        CustomElement(name="c", props={"a": 1})):
            element.thread_id, element.for_id = thread_id, question.id
            await layer.create_element(element)
        await layer.upsert_feedback(Feedback(forId=question.id, value=1, threadId=thread_id,
                                             comment="ok"))
        thread = await layer.get_thread(thread_id)
        assert thread is not None and thread["name"] == "Lease"
        await layer.list_threads(Pagination(first=5), ThreadFilter(userId=user.id))
        await layer.get_element(thread_id, question.id)
        await layer.delete_thread(thread_id)
    finally:
        await layer.close()

    assert failures == []
    written: dict[str, set[str]] = {table: set() for table in TABLES.tables}
    for table, columns in re.findall(r"INSERT INTO (\w+) \(([^)]*)\)", "\n".join(statements)):
        written[table] |= set(re.findall(r'"(\w+)"', columns))
    named = set(re.findall(r'"(\w+)"', "\n".join(statements))) | {"id"}
    for table in TABLES.sorted_tables:
        mirrored = set(table.columns.keys())
        assert written[table.name] <= mirrored, table.name  # else Chainlit loses the row
        assert mirrored <= written[table.name] | named, table.name  # else a column is stale


def test_an_action_is_awaited_in_its_request_and_chainlits_stop_cancels_the_current_task() -> None:
    """stoppable.as_task: Chainlit awaits an action's callback in /project/action (no task the
    stop button reaches), its stop handler cancels `session.current_task`, and the emitter has the
    task_start / task_end events that show and hide the page's stop button."""
    from chainlit.emitter import ChainlitEmitter

    assert "await callback(action)" in inspect.getsource(chainlit.server.call_action)
    assert "session.current_task.cancel()" in inspect.getsource(chainlit.socket.stop)
    assert callable(ChainlitEmitter.task_start) and callable(ChainlitEmitter.task_end)
