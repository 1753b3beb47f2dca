"""The history database on a real SQLite file: created, migrated, checked, and used through
Chainlit's own SQLAlchemyDataLayer methods."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator
from dataclasses import fields
from pathlib import Path

import pytest
from chainlit.context import init_http_context
from chainlit.element import ElementDict, File, Video
from chainlit.step import StepDict
from chainlit.types import Feedback, Pagination, ThreadDict, ThreadFilter
from chainlit.user import User

from glm1m.chainlit_app.history import HistoryDataLayer, HistoryError, database_url, open_history
from glm1m.chainlit_app.history_schema import TABLES
from glm1m.chainlit_app.storage import LocalStorage
from glm1m.errors import UserFacingError
from glm1m.settings import Settings

# Chainlit's own dump of the SQL schema it documents for this data layer (2.x docs): it lacks
# columns that 2.12 writes (modes, autoCollapse, autoPlay, playerConfig).
CHAINLIT_DOCS_SCHEMA = """
CREATE TABLE users ("id" TEXT PRIMARY KEY, "identifier" TEXT NOT NULL UNIQUE,
                    "metadata" TEXT NOT NULL, "createdAt" TEXT);
CREATE TABLE threads ("id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT, "userId" TEXT,
                      "userIdentifier" TEXT, "tags" TEXT, "metadata" TEXT);
CREATE TABLE steps ("id" TEXT PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL,
    "threadId" TEXT NOT NULL, "parentId" TEXT, "streaming" BOOLEAN NOT NULL,
    "waitForAnswer" BOOLEAN, "isError" BOOLEAN, "metadata" TEXT, "tags" TEXT, "input" TEXT,
    "output" TEXT, "createdAt" TEXT, "command" TEXT, "start" TEXT, "end" TEXT,
    "generation" TEXT, "showInput" TEXT, "language" TEXT, "indent" INT, "defaultOpen" BOOLEAN);
CREATE TABLE elements ("id" TEXT PRIMARY KEY, "threadId" TEXT, "type" TEXT, "url" TEXT,
    "chainlitKey" TEXT, "name" TEXT NOT NULL, "display" TEXT, "objectKey" TEXT, "size" TEXT,
    "page" INT, "language" TEXT, "forId" TEXT, "mime" TEXT, "props" TEXT);
CREATE TABLE feedbacks ("id" TEXT PRIMARY KEY, "forId" TEXT NOT NULL, "threadId" TEXT NOT NULL,
    "value" INT NOT NULL, "comment" TEXT);
INSERT INTO steps ("id", "name", "type", "threadId", "streaming", "output")
    VALUES ('old-step', 'glm1m', 'assistant_message', 't', 0, 'kept');
"""


def settings_for(tmp_path: Path, **overrides: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", _env_file=None, **overrides)


def columns(db: Path, table: str) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def old_database(tmp_path: Path, schema: str = CHAINLIT_DOCS_SCHEMA) -> Path:
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.executescript(schema)
    return db


@pytest.fixture
async def history(tmp_path: Path) -> AsyncIterator[HistoryDataLayer]:
    layer = open_history(settings_for(tmp_path), LocalStorage(tmp_path / "data" / "files"))
    yield layer
    await layer.close()


def test_default_database_is_a_sqlite_file_in_data_dir(tmp_path: Path) -> None:
    url = database_url(settings_for(tmp_path))
    assert (tmp_path / "data").is_dir()
    assert url == f"sqlite+aiosqlite:///{(tmp_path / 'data' / 'glm1m.db').resolve()}"
    assert database_url(settings_for(tmp_path, database_url="postgresql+asyncpg://h/db")) == \
        "postgresql+asyncpg://h/db"


async def test_new_database_gets_every_column_chainlit_writes(history: HistoryDataLayer,
                                                             tmp_path: Path) -> None:
    db = tmp_path / "data" / "glm1m.db"
    # What Chainlit 2.12 INSERTs without naming in any SELECT.
    assert {"command", "modes", "defaultOpen", "autoCollapse"} <= columns(db, "steps")
    assert {"autoPlay", "playerConfig", "objectKey"} <= columns(db, "elements")
    # And every key of the dicts it writes, so a Chainlit upgrade that adds one fails here.
    persisted = {
        "users": {"id", "identifier", "createdAt", "metadata"},
        "threads": set(ThreadDict.__annotations__) - {"steps", "elements"},
        "steps": set(StepDict.__annotations__) - {"feedback", "icon"},  # icon goes into metadata
        "elements": set(ElementDict.__annotations__) - {"path"},
        "feedbacks": {f.name for f in fields(Feedback)},
    }
    for table, needed in persisted.items():
        assert needed <= columns(db, table), table
        assert needed <= set(TABLES.tables[table].columns.keys()), table
    with sqlite3.connect(db) as conn:  # readers do not wait for a streaming answer's writes
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_old_database_missing_columns_is_migrated_and_keeps_its_rows(tmp_path: Path) -> None:
    db = old_database(tmp_path)
    assert "autoCollapse" not in columns(db, "steps")
    open_history(settings_for(tmp_path, database_url=f"sqlite+aiosqlite:///{db}"),
                 LocalStorage(tmp_path / "files"))
    assert {"modes", "autoCollapse"} <= columns(db, "steps")
    assert {"autoPlay", "playerConfig"} <= columns(db, "elements")
    with sqlite3.connect(db) as conn:
        kept = conn.execute("SELECT output FROM steps WHERE id = 'old-step'").fetchone()
    assert kept == ("kept",)


def test_missing_columns_without_migration_are_refused_with_the_way_out(tmp_path: Path) -> None:
    db = old_database(tmp_path)
    with pytest.raises(HistoryError) as raised:
        open_history(settings_for(tmp_path, database_url=f"sqlite+aiosqlite:///{db}",
                                  database_migrate=False), LocalStorage(tmp_path / "files"))
    message = str(raised.value)
    assert isinstance(raised.value, UserFacingError)
    assert "steps lacks column(s) modes, autoCollapse" in message
    assert "GLM1M_DATABASE_MIGRATE=true" in message
    assert "autoCollapse" not in columns(db, "steps")  # nothing was changed


def test_missing_table_without_migration_is_refused(tmp_path: Path) -> None:
    db = old_database(tmp_path, "CREATE TABLE users (id TEXT PRIMARY KEY);")
    with pytest.raises(HistoryError, match="table threads is missing"):
        open_history(settings_for(tmp_path, database_url=f"sqlite+aiosqlite:///{db}",
                                  database_migrate=False), LocalStorage(tmp_path / "files"))


@pytest.mark.parametrize("steps, problem", [
    ('CREATE TABLE steps (id TEXT, name TEXT)', "steps.id is neither its primary key nor unique"),
    ('CREATE TABLE steps (id TEXT PRIMARY KEY, "command" TEXT NOT NULL)',
     "steps.command is NOT NULL but Chainlit may leave it empty"),
])
def test_wrongly_shaped_table_is_refused_even_with_migration(tmp_path: Path, steps: str,
                                                             problem: str) -> None:
    db = old_database(tmp_path, steps + ";")
    with pytest.raises(HistoryError) as raised:
        open_history(settings_for(tmp_path, database_url=f"sqlite+aiosqlite:///{db}"),
                     LocalStorage(tmp_path / "files"))
    assert problem in str(raised.value)
    assert "point GLM1M_DATABASE_URL at a new database" in str(raised.value)


def test_sync_driver_url_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match="GLM1M_DATABASE_URL .* sqlite\\+aiosqlite"):
        open_history(settings_for(tmp_path, database_url=f"sqlite:///{tmp_path}/x.db"),
                     LocalStorage(tmp_path / "files"))


async def test_conversation_round_trips_through_chainlits_data_layer(
        history: HistoryDataLayer, tmp_path: Path) -> None:
    user = await history.create_user(User(identifier="alice", metadata={"provider": "password"}))
    assert user is not None and user.metadata == {"provider": "password"}
    thread_id = str(uuid.uuid4())
    init_http_context(thread_id=thread_id)  # create_step/create_element look at the session
    await history.update_thread(thread_id, name="Contract summary", user_id=user.id,
                                tags=["pdf"], metadata={"chat_settings": {"temperature": 0.2}})
    question: StepDict = {
        "id": str(uuid.uuid4()), "threadId": thread_id, "name": "alice", "type": "user_message",
        "output": "Summarise the contract", "createdAt": "2025-01-01T00:00:00.000Z",
        "start": "2025-01-01T00:00:00.000Z", "end": "2025-01-01T00:00:00.000Z",
        "command": "summarise", "modes": {"model": "glm"}, "streaming": False,
        "waitForAnswer": False, "isError": False, "metadata": {}, "tags": ["q"],
        "language": None, "parentId": None,
    }
    answer: StepDict = {
        "id": str(uuid.uuid4()), "threadId": thread_id, "name": "glm1m",
        "type": "assistant_message", "output": "It is a lease.", "input": "",
        "createdAt": "2025-01-01T00:00:05.000Z", "streaming": False, "isError": False,
        "metadata": {}, "defaultOpen": False, "autoCollapse": True, "showInput": False,
        "generation": None,
    }
    await history.create_step(question)
    await history.create_step(answer)
    await history.create_element(File(name="notes.txt", content=b"clause 4", mime="text/plain",
                                      thread_id=thread_id, for_id=answer["id"]))
    await history.create_element(Video(name="clip.mp4", content=b"\0\0video", thread_id=thread_id,
                                       for_id=answer["id"], player_config={"muted": True}))
    await history.upsert_feedback(Feedback(forId=answer["id"], value=1, threadId=thread_id))

    thread = await history.get_thread(thread_id)
    assert thread is not None
    assert thread["name"] == "Contract summary" and thread["userIdentifier"] == "alice"
    assert [s["output"] for s in thread["steps"]] == ["Summarise the contract", "It is a lease."]
    assert thread["steps"][1]["feedback"]["value"] == 1
    notes = next(e for e in thread["elements"] if e["name"] == "notes.txt")
    notes_key = notes["objectKey"]
    assert notes_key == f"{user.id}/{notes['id']}/notes.txt"  # Chainlit's key: user/element/name
    assert notes["url"] == f"/glm1m/files/{notes_key}"
    assert (tmp_path / "data" / "files" / notes_key).read_bytes() == b"clause 4"
    assert await history.file_owner(notes_key) == "alice"
    assert await history.file_owner("nobody/none/x.txt") is None

    page = await history.list_threads(Pagination(first=10), ThreadFilter(userId=user.id))
    assert [t["id"] for t in page.data] == [thread_id]
    with sqlite3.connect(tmp_path / "data" / "glm1m.db") as conn:
        stored = conn.execute('SELECT "command", "modes", "tags", "autoCollapse" FROM steps '
                              'WHERE id = ?', (question["id"],)).fetchone()
        player = conn.execute('SELECT "playerConfig" FROM elements WHERE name = ?',
                              ("clip.mp4",)).fetchone()
    assert stored == ("summarise", '{"model": "glm"}', '["q"]', None)
    assert player == ('{"muted": true}',)


async def test_thread_id_that_is_not_a_uuid_is_never_stored(history: HistoryDataLayer) -> None:
    user = await history.create_user(User(identifier="mallory"))
    assert user is not None
    # get_all_user_threads pastes stored thread ids into its SQL text.
    evil = "x') UNION SELECT * FROM steps --"
    with pytest.raises(ValueError, match="not a UUID"):
        await history.update_thread(evil, name="evil", user_id=user.id)
    page = await history.list_threads(Pagination(first=10), ThreadFilter(userId=user.id))
    assert page.data == []
