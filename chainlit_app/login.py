"""With login on: users, the session-signing secret, the history database and the file store,
opened when app.py is imported. A problem with any of them stops the app there with one
sentence, before anyone can lose work.

Logins are Chainlit's: a signed cookie (JWT) valid for `user_session_timeout`, checked by
`chainlit.auth.get_current_user` on every HTTP route and socket connect. glm1m adds three things:
- the login route counts wrong passwords (`FailedLogins`) and refuses a locked-out name or
  address with HTTP 429 before any password is hashed;
- a login carries its account's `credential`, and every token Chainlit decodes is checked against
  the account as it is now: a removed user or a changed password ends the sessions begun before,
  within one request;
- an open socket whose login is no longer valid is closed at its next event.

With login off on loopback (the demo's default), the same history and file store serve one local
user, logged in without a password through Chainlit's header_auth_callback: only this machine
reaches the page (the app listens on loopback and HostGuard answers loopback names only), so a
reload or New Chat keeps what was done (issue 34).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import wraps
from typing import Annotated, Any

import chainlit as cl
import chainlit.auth
import chainlit.server
import jwt
from chainlit.session import WebsocketSession
from chainlit.user import User
from fastapi import APIRouter, Depends, HTTPException, Request, Response
from fastapi.security import OAuth2PasswordRequestForm

from glm1m.accounts import Accounts, FailedLogins, ensure_auth_secret
from glm1m.chainlit_app import history
from glm1m.chainlit_app.i18n import language_of
from glm1m.chainlit_app.origins import LOOPBACK_NAMES
from glm1m.chainlit_app.storage import LocalStorage, file_router, mount_first
from glm1m.errors import AccountError, UserFacingError
from glm1m.settings import Settings

CREDENTIAL = "credential"  # the key of the account's credential in a login's metadata
LOCAL_USER = "local"  # the user of a page with login off on loopback (keeps_local_history)
# scrypt takes ~0.1 s and 32 MiB per check: two threads of their own keep a flood of logins from
# taking the shared thread pool that PDF reading and CSV work use, and bound the memory.
_PASSWORD_CHECKS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="glm1m-login")


def open_accounts_and_history(settings: Settings) -> tuple[Accounts, history.HistoryDataLayer]:
    try:
        accounts = Accounts.from_settings(settings)
        accounts.require_users()
    except UserFacingError as error:
        print(f"glm1m: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    data = open_history(settings)
    mount_first(chainlit.server.app, login_router(FailedLogins.from_settings(settings)))
    end_sessions_when_accounts_change(accounts)
    return accounts, data


def keeps_local_history(settings: Settings, host: str) -> bool:
    """Login off, the page served on loopback (only this machine reaches it), and
    GLM1M_LOCAL_HISTORY on: one local user, logged in without a password, keeps the history."""
    return not settings.auth_required and settings.local_history and host in LOOPBACK_NAMES


def local_user() -> cl.User:
    """The one user of a page with login off on loopback (header_auth_callback: no password)."""
    return cl.User(identifier=LOCAL_USER, metadata={"provider": "local"})


def open_history(settings: Settings) -> history.HistoryDataLayer:
    """The session-signing secret, the history database and the file store behind /files."""
    try:
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
    return data


async def check_password(accounts: Accounts, username: str, password: str) -> cl.User | None:
    # Off the event loop, so other sessions keep streaming; in the login threads, see above.
    credential = await asyncio.get_running_loop().run_in_executor(
        _PASSWORD_CHECKS, accounts.log_in, username, password)
    if credential is None:
        return None
    return cl.User(identifier=username, metadata={"provider": "password", CREDENTIAL: credential})


def login_router(failures: FailedLogins) -> APIRouter:
    """POST /login in front of Chainlit's: refused at once while the name or the address is
    locked out; otherwise Chainlit's login, with the attempt counted unless it succeeds."""
    router = APIRouter()

    @router.post("/login")
    async def login(request: Request, response: Response,
                    form_data: Annotated[OAuth2PasswordRequestForm, Depends()]) -> Any:
        name = form_data.username
        address = request.client.host if request.client else ""
        try:
            # Counted before the check, so concurrent guesses cannot all pass the limit at once.
            began = failures.begin(name, address)
        except AccountError as error:  # said in the browser's language, as the page is
            lang = language_of(request.headers.get("accept-language"))
            raise HTTPException(status_code=429, detail=error.in_language(lang)) from None
        # Chainlit's own route function, called as its route would be: its public hook,
        # password_auth_callback, gets no request (no address to limit) and cannot answer 429.
        reply = await chainlit.server.login(request, response, form_data)
        failures.succeeded(name, address, began)  # a wrong password raised HTTPException 401
        return reply

    return router


def end_sessions_when_accounts_change(accounts: Accounts) -> None:
    """Check every login Chainlit decodes against the account as it is now."""
    decode = chainlit.auth.decode_jwt

    def decode_current(token: str) -> User:
        user = decode(token)
        try:
            current = accounts.credential(user.identifier)
        except AccountError:  # a broken users file: nobody is logged in until it is fixed
            current = None
        if current is None or current != (user.metadata or {}).get(CREDENTIAL):
            raise jwt.InvalidTokenError("the account was removed or its password changed")
        return user

    # A reach-in, not a hook: Chainlit 2.12 checks a login only when it is made
    # (password_auth_callback); afterwards it trusts the signed token until it expires, and no
    # public hook sees a token again (authenticate_user asks the data layer's get_user for the
    # name only, and carries on with the token's user if that fails). So decode_jwt is replaced
    # where it is looked up when used: chainlit.auth.authenticate_user (behind get_current_user,
    # so every route and the socket's connect) and the /auth/jwt route; and the socket's event
    # handlers, which never look at the token again, are wrapped in python-socketio's table.
    # tests/unit/test_chainlit_reach_ins.py fails on a release that changes any of these.
    chainlit.auth.decode_jwt = decode_current
    chainlit.server.decode_jwt = decode_current
    sio = chainlit.server.sio
    for event, handler in list(sio.handlers["/"].items()):
        if event not in ("connect", "disconnect"):
            sio.handlers["/"][event] = _closed_when_invalid(handler, decode_current)


def _closed_when_invalid(handler: Callable[..., Awaitable[Any]],
                         decode: Callable[[str], User]) -> Callable[..., Awaitable[Any]]:
    @wraps(handler)
    async def run(sid: str, *args: Any) -> Any:
        session = WebsocketSession.get(sid)
        if session is not None and session.user is not None:
            try:
                decode(session.token or "")
            except jwt.InvalidTokenError:
                await chainlit.server.sio.disconnect(sid)
                return None
        return await handler(sid, *args)
    return run
