"""Chat history that survives restarts: Chainlit 2.12's SQLAlchemyDataLayer over a database whose
schema glm1m creates, migrates and checks itself (history_schema.py).

`open_history` is meant to run when app.py is imported, before the server starts: Chainlit's
`execute_sql` turns every database error into a logged warning and a None result, so a schema that
does not fit would otherwise lose messages without anyone seeing a failure.

The database is GLM1M_DATABASE_URL, any SQLAlchemy *async* URL (sqlite+aiosqlite://...,
postgresql+asyncpg://... with asyncpg installed); empty means the SQLite file {data_dir}/glm1m.db.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.data.storage_clients.base import BaseStorageClient
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import create_async_engine

from glm1m.catalog import said
from glm1m.chainlit_app.history_schema import migrate, schema_problems
from glm1m.errors import HistoryError
from glm1m.files import UUID
from glm1m.settings import Settings

SQLITE_BUSY_TIMEOUT_S = 30
T = TypeVar("T")



class HistoryDataLayer(SQLAlchemyDataLayer):
    """Chainlit's SQLAlchemy data layer with three repairs, and the lookup the file route needs."""

    async def execute_sql(self, query: str,
                          parameters: dict) -> list[dict[str, Any]] | int | None:
        # Chainlit binds thread/step `tags` (lists) and step `modes` / element `playerConfig`
        # (dicts) as they are; SQLite and asyncpg refuse both for a text column: the row is lost.
        rows = await super().execute_sql(query, {k: _bindable(v) for k, v in parameters.items()})
        if isinstance(rows, list):
            # Elements other than custom ones are stored without props, and get_element
            # json.loads the NULL: /project/thread/.../element/... answered its owner with a 500.
            for row in rows:
                if "props" in row and row["props"] is None:
                    row["props"] = "{}"
        return rows

    async def update_thread(self, thread_id: str, name: str | None = None,
                            user_id: str | None = None, metadata: dict | None = None,
                            tags: list[str] | None = None) -> None:
        # The browser chooses the thread id, and get_all_user_threads pastes stored ids into its SQL
        # text (`IN ('...')`): an id with a quote in it would be SQL injection. Real ids are UUIDs.
        if not UUID.fullmatch(thread_id):
            raise ValueError(f"refusing to store a thread whose id is not a UUID: {thread_id!r}")
        await super().update_thread(thread_id, name=name, user_id=user_id, metadata=metadata,
                                    tags=tags)

    async def file_owner(self, object_key: str) -> str | None:
        """Identifier of the user whose thread holds the element stored under object_key."""
        rows = await self.execute_sql(
            'SELECT t."userIdentifier" AS owner FROM elements e JOIN threads t ON t."id" = '
            'e."threadId" WHERE e."objectKey" = :key', {"key": object_key})
        owners = {row["owner"] for row in rows} if isinstance(rows, list) else set()
        # One key is one element; several owners would mean something wrote the key twice.
        return owners.pop() if len(owners) == 1 else None


def database_url(settings: Settings) -> str:
    """settings.database_url, or the SQLite file in data_dir (created if missing)."""
    if settings.database_url:
        return settings.database_url
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # Absolute, so the history does not depend on the directory the app was started from.
    return f"sqlite+aiosqlite:///{(settings.data_dir / 'glm1m.db').resolve()}"


def open_history(settings: Settings, storage: BaseStorageClient) -> HistoryDataLayer:
    """Migrate (if settings.database_migrate) and self-check the database, then return the data
    layer. Blocks; safe with or without a running event loop. Raises HistoryError."""
    url = database_url(settings)
    run_blocking(prepare(url, settings.database_migrate))
    sqlite = make_url(url).get_backend_name() == "sqlite"
    return HistoryDataLayer(url, storage_provider=storage,
                            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S} if sqlite else None)


async def prepare(url: str, migrate_schema: bool) -> None:
    """Create or migrate the schema when allowed; raise HistoryError if it still does not fit."""
    shown = _shown(url)
    try:
        engine = create_async_engine(url)
    except (SQLAlchemyError, ImportError, ValueError) as error:
        raise HistoryError(key="db_url_bad", shown=shown, error=_brief(error)) from error
    try:
        if engine.dialect.name == "sqlite":
            async with engine.connect() as conn:
                # Readers (the thread list) then never block the writer streaming an answer.
                await conn.exec_driver_sql("PRAGMA journal_mode=WAL")
        if migrate_schema:
            async with engine.begin() as conn:
                await conn.run_sync(migrate)
        async with engine.connect() as conn:
            problems = await conn.run_sync(schema_problems)
    except (SQLAlchemyError, OSError) as error:
        raise HistoryError(key="db_cannot_open", shown=shown, error=_brief(error)) from error
    finally:
        await engine.dispose()
    if problems:
        remedy = said("db_fix_by_hand") if migrate_schema else said("db_migrate")
        raise HistoryError(key="db_schema", shown=shown, problems="; ".join(problems), remedy=remedy)


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on a loop of its own, even when called from inside one
    (Chainlit imports app.py outside any loop, but re-imports it inside one with --watch)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _bindable(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def _brief(error: BaseException) -> str:
    # SQLAlchemy appends the statement and a link to its docs on further lines.
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def _shown(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (SQLAlchemyError, ValueError):
        return "(unparsable URL)"
