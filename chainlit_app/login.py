"""With login on: users, the session-signing secret, the history database and the file store,
opened when app.py is imported. A problem with any of them stops the app there with one
sentence, before anyone can lose work."""

from __future__ import annotations

import asyncio
import os
import sys

import chainlit as cl
import chainlit.server

from chainlit_app import history
from chainlit_app.storage import LocalStorage, file_router, mount_first
from glm1m.accounts import Accounts, ensure_auth_secret
from glm1m.errors import UserFacingError
from glm1m.settings import Settings


def open_accounts_and_history(settings: Settings) -> tuple[Accounts, history.HistoryDataLayer]:
    try:
        accounts = Accounts.from_settings(settings)
        accounts.require_users()
        os.environ["CHAINLIT_AUTH_SECRET"] = ensure_auth_secret(settings.data_dir)
        storage = LocalStorage(settings.data_dir / "files")
        data = history.open_history(settings, storage)
    except UserFacingError as error:
        print(f"glm1m: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as error:  # a data dir this user cannot create or write
        print(f"glm1m: cannot use {error.filename or settings.data_dir} ({error.strerror}); give "
              f"GLM1M_DATA_DIR a folder this user can write.", file=sys.stderr)
        raise SystemExit(2) from None
    mount_first(chainlit.server.app, file_router(storage, data.file_owner))
    return accounts, data


async def check_password(accounts: Accounts, username: str, password: str) -> cl.User | None:
    # scrypt takes ~0.1 s on purpose: off the event loop, so other sessions keep streaming.
    if await asyncio.to_thread(accounts.verify, username, password):
        return cl.User(identifier=username, metadata={"provider": "password"})
    return None
