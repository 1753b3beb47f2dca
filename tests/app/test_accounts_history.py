"""Login, history that survives a restart, and each user's work kept from the others: the real
app with GLM1M_AUTH on, users made by the real `glm1m users add`, history in real SQLite."""

from __future__ import annotations

import asyncio
import csv
import json
import signal
import io
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import socketio

from glm1m.translation.job import checkpoint_path
from tests.conftest import ROOT, app_env, ui_launch
from tests.support.chainlit_client import ChainlitSession
from tests.support.pdfs import make_pdf, words_page
from tests.support.service import Service, free_port

pytestmark = pytest.mark.app
PASSWORDS = {"alice": "alice-secret-1", "bob": "bob-secret-22"}


class AuthedApp:
    """`chainlit run` with login on, restartable over the same data dir."""

    def __init__(self, data_dir: Path, log_dir: Path, env: dict[str, str]) -> None:
        self.data_dir, self.log_dir, self.env = data_dir, log_dir, env
        self.service: Service | None = None
        self.starts = 0

    def start(self) -> None:
        if self.service is not None:  # also after a SIGKILL: reap it and its process group
            self.service.stop()
        port = free_port()
        self.starts += 1
        self.url = f"http://127.0.0.1:{port}"
        command, cwd = ui_launch(port, self.data_dir)
        self.service = Service(f"chainlit-auth-{self.starts}", command,
                               ready=r"Your app is available at", log_dir=self.log_dir,
                               env=self.env, cwd=cwd)
        self.service.wait_ready(120, port=port)

    def restart(self) -> None:
        self.start()

    def login(self, name: str, password: str | None = None) -> httpx.Client:
        http = httpx.Client(base_url=self.url, timeout=30)
        reply = http.post("/login", data={"username": name, "password": password or PASSWORDS[name]})
        assert reply.status_code == 200, reply.text
        return http

    def session(self, http: httpx.Client, thread_id: str | None = None) -> ChainlitSession:
        cookies = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        return ChainlitSession(self.url, cookies=cookies, thread_id=thread_id)


def users_command(data_dir: Path, *args: str, password: str = "") -> subprocess.CompletedProcess:
    """`glm1m users ...` as its own process, the way an operator runs it beside the app."""
    return subprocess.run([sys.executable, "-m", "glm1m.cli", "users", *args], input=password + "\n",
                          capture_output=True, text=True, cwd=str(ROOT),
                          env=app_env(GLM1M_DATA_DIR=str(data_dir)), timeout=60)


def add_user(name: str, data_dir: Path, password: str | None = None) -> None:
    done = users_command(data_dir, "add", name, "--password-stdin", password=password or PASSWORDS[name])
    assert done.returncode == 0, done.stderr


def started_authed(model_server, fault_proxy, tmp_path_factory, names=tuple(PASSWORDS),
                   **settings: str) -> Iterator[AuthedApp]:
    """The app with login on over a fresh data dir holding users `names`, with more `settings`."""
    data_dir = tmp_path_factory.mktemp("authed-data")
    for name in names:
        add_user(name, data_dir)
    env = app_env(GLM1M_BASE_URL=f"{fault_proxy.url}/v1", GLM1M_API_KEY=model_server.api_key,
                  GLM1M_DEMO="true", GLM1M_AUTH="true", GLM1M_DATA_DIR=str(data_dir),
                  GLM1M_METRICS_PORT="0", GLM1M_MAX_TOKENS="12", GLM1M_TRANSLATE_MAX_TOKENS="8", **settings)
    app = AuthedApp(data_dir, tmp_path_factory.mktemp("authed-logs"), env)
    try:
        app.start()
        yield app
    finally:
        if app.service is not None:
            app.service.stop()


@pytest.fixture(scope="module")
def authed(model_server, fault_proxy, tmp_path_factory) -> Iterator[AuthedApp]:
    yield from started_authed(model_server, fault_proxy, tmp_path_factory)


def write_csv(path: Path, texts: list[str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows(enumerate(texts))
    return path


async def chat_and_translate(app: AuthedApp, http: httpx.Client, tmp_path: Path) -> tuple[str, str, bytes]:
    """In a fresh thread: one chat turn and one CSV translation. Returns (thread id, the answer
    shown, the translated CSV as downloaded in the live session)."""
    chat = app.session(http)
    await chat.connect()
    await chat.started()
    start = await chat.ask("hello, remember me")
    answer = chat.answers(start)[-1]["output"]
    ref = await chat.upload(write_csv(tmp_path / "rows.csv", ["第一行", "second row"]))
    start = chat.mark()
    await chat.send("", file_refs=[ref])
    element = await chat.wait_for(lambda e: e.name == "element" and e.data.get("type") == "file"
                                  and e.data.get("name") == "rows.translated.csv", 180, start)
    produced = await chat.download(element.data)
    thread_id = next(m["threadId"] for m in chat.messages() if m.get("threadId"))
    await chat.close()
    return thread_id, answer, produced


def stored_as_hers(http: httpx.Client, thread_id: str, timeout_s: float) -> bool:
    """Whether the history lists the thread as the logged-in user's within timeout_s. The app has
    no event for "thread written", so this asks, at most every 0.2 s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reply = http.get(f"/project/thread/{thread_id}")
        if reply.status_code == 200 and reply.json().get("userIdentifier"):
            return True
        time.sleep(0.2)
    return False


def stored_file_url(thread: dict, name: str) -> str | None:
    urls = [e["url"] for e in thread.get("elements") or [] if e.get("name") == name and e.get("url")]
    return urls[0] if urls else None


async def test_history_and_files_survive_a_restart_and_the_thread_resumes(authed, tmp_path, healthy_proxy) -> None:
    alice = authed.login("alice")
    thread_id, answer, produced = await chat_and_translate(authed, alice, tmp_path)
    assert answer and list(csv.DictReader(io.StringIO(produced.decode("utf-8-sig"))))

    authed.restart()
    alice = authed.login("alice")
    thread = alice.get(f"/project/thread/{thread_id}").json()
    outputs = [s.get("output") or "" for s in thread["steps"]]
    assert "hello, remember me" in outputs and answer in outputs
    url = stored_file_url(thread, "rows.translated.csv")
    assert url, "the translated CSV is kept with the thread"
    download = alice.get(url)
    assert download.content == produced
    assert download.headers["content-disposition"].startswith("attachment")  # a file, not a page
    assert download.headers["x-content-type-options"] == "nosniff"

    resumed = authed.session(alice, thread_id)
    await resumed.connect()
    await resumed.wait_for(lambda e: e.name == "resume_thread", 60)
    healthy_proxy.reset()
    await resumed.ask("and now?")
    sent = healthy_proxy.journal[-1][0]["messages"]
    # The model sees the resumed history, and only the chat: no status line of the translation.
    assert [m for m in sent if m["role"] != "system"] == [
        {"role": "user", "content": "hello, remember me"}, {"role": "assistant", "content": answer},
        {"role": "user", "content": "and now?"}]
    await resumed.close()


async def test_a_reopened_chat_sends_its_follow_ups_to_its_document(authed, tmp_path, healthy_proxy) -> None:
    make_pdf(tmp_path / "policy.pdf", [words_page(n, 150) for n in range(1, 3)])
    alice = authed.login("alice")
    chat = authed.session(alice)
    await chat.connect()
    await chat.started()
    ref = await chat.upload(tmp_path / "policy.pdf", mime="application/pdf")
    await chat.ask("What is on page 2?", file_refs=[ref])
    thread_id = next(m["threadId"] for m in chat.messages() if m.get("threadId"))
    document_prompt = healthy_proxy.journal[-1][0]["messages"][-1]["content"]
    assert document_prompt.startswith('<document name="policy.pdf">')
    await chat.close()

    authed.restart()
    resumed = authed.session(authed.login("alice"), thread_id)
    await resumed.connect()
    await resumed.wait_for(lambda e: e.name == "resume_thread", 60)
    healthy_proxy.reset()
    await resumed.ask("And page 1?")
    asked = healthy_proxy.journal[-1][0]["messages"][-1]["content"]
    # The same document, byte for byte (so vLLM's prefix cache can serve it), then the new question.
    assert asked == document_prompt.removesuffix("What is on page 2?") + "And page 1?"
    await resumed.close()


async def test_one_user_cannot_list_open_resume_or_download_anothers_work(authed, tmp_path) -> None:
    alice = authed.login("alice")
    thread_id, _, produced = await chat_and_translate(authed, alice, tmp_path)
    url = stored_file_url(alice.get(f"/project/thread/{thread_id}").json(), "rows.translated.csv")
    assert alice.get(url).content == produced

    def listing(http: httpx.Client) -> list[str]:
        reply = http.post("/project/threads", json={"pagination": {"first": 50}, "filter": {}})
        return [t["id"] for t in reply.json()["data"]]

    assert thread_id in listing(alice)  # the listing works, so its absence below means something
    bob = authed.login("bob")
    assert thread_id not in listing(bob)
    assert bob.get(f"/project/thread/{thread_id}").status_code in (401, 403, 404)
    assert bob.get(url).status_code == 404  # as if it did not exist
    assert httpx.get(authed.url + url, timeout=30).status_code == 401  # not logged in
    with pytest.raises(socketio.exceptions.ConnectionError):
        await authed.session(bob, thread_id).connect()


async def test_wrong_password_and_unknown_user_are_refused_alike(authed) -> None:
    with httpx.Client(base_url=authed.url, timeout=30) as http:
        wrong = http.post("/login", data={"username": "alice", "password": "nope"})
        unknown = http.post("/login", data={"username": "mallory", "password": "nope"})
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json() == unknown.json()


async def test_app_killed_mid_batch_resumes_in_the_reopened_thread_without_losing_or_repeating_rows(
        authed, tmp_path, healthy_proxy) -> None:
    rows = [f"第{i}行：合同条款 {i}。" for i in range(400)]
    source = write_csv(tmp_path / "batch.csv", rows)
    alice = authed.login("alice")
    chat = authed.session(alice)
    await chat.connect()
    await chat.started()
    await chat.send("", file_refs=[await chat.upload(source)])
    # Off the event loop: the client must keep answering the app (the column question) meanwhile.
    assert await asyncio.to_thread(healthy_proxy.completions_reached(60).wait, 180), \
        f"the batch never got going: {[(e.name, str(e.data)[:80]) for e in chat.events[-8:]]}"
    thread_id = next(m["threadId"] for m in chat.messages() if m.get("threadId"))
    # Chainlit writes a new thread's owner in a task of its own; a crash before that leaves a chat
    # nobody can reopen. This test is about the rows, so it crashes once the chat is stored as hers.
    assert await asyncio.to_thread(stored_as_hers, alice, thread_id, 60), "the chat was never stored"
    authed.service.signal(signal.SIGKILL)  # no shutdown, no flush: a crash
    authed.service.wait_exit(30)
    # The job's folder under the thread's; only the checkpoint exists yet (the CSV comes at the end).
    progress, = (authed.data_dir / "translations" / thread_id).glob(
        "*/" + checkpoint_path(Path("batch.translated.csv")).name)
    kept = {json.loads(line)["i"] for line in progress.read_text().splitlines()
            if line.startswith('{"i"')}  # a line cut short by the kill is not a finished row
    assert len(kept) >= 20  # some rows were done and kept (as soon as each finished)

    authed.start()
    # Counted once the app is back: what the server finished for the dead app is not a resend.
    done_before = len(healthy_proxy.journal)
    alice = authed.login("alice")
    resumed = authed.session(alice, thread_id)
    await resumed.connect()
    await resumed.wait_for(lambda e: e.name == "resume_thread", 60)
    start = resumed.mark()
    await resumed.send("", file_refs=[await resumed.upload(source)])
    element = await resumed.wait_for(lambda e: e.name == "element"
                                     and e.data.get("name") == "batch.translated.csv", 300, start)
    out = list(csv.DictReader(io.StringIO((await resumed.download(element.data)).decode("utf-8-sig"))))
    assert [r["text"] for r in out] == rows  # every row once, in order
    assert all(r["translation"] and not r["translation_error"] for r in out)
    resent = len(healthy_proxy.journal) - done_before
    assert resent == len(rows) - len(kept)  # exactly the rows not finished before the crash
    await resumed.close()
