"""Element files on local disk for Chainlit's data layer, and the route that serves them back.

Chainlit 2.12's SQLAlchemyDataLayer stores each element under the object key
`{user id}/{element id}/{element name}` (create_element) and, when a thread is reopened, asks
get_read_url for the URL the browser loads it from. Here that is /glm1m/files/<key>, answered by
`file_router` only for the logged-in author of the thread the element belongs to.

The element name comes from the uploader's browser, so keys are checked before they touch the disk.
"""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from chainlit.auth import get_current_user
from chainlit.data.storage_clients.base import BaseStorageClient
from chainlit.user import PersistedUser, User
from fastapi import APIRouter, Depends, FastAPI, HTTPException
from fastapi.responses import FileResponse

from glm1m.files import write_whole

FILES_URL = "/glm1m/files"
# Shown in the page; anything else (HTML, SVG, scripts) is sent as a download, never rendered.
INLINE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf",
                "text/plain", "audio/", "video/")

OwnerOf = Callable[[str], Awaitable[str | None]]


class UnsafeObjectKey(ValueError):
    """An object key that could name a file outside the storage folder."""


class LocalStorage(BaseStorageClient):
    def __init__(self, root: Path, url_prefix: str = FILES_URL) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()
        self.url_prefix = url_prefix.rstrip("/")

    def path_of(self, object_key: str) -> Path:
        """The file for object_key; raises UnsafeObjectKey for keys that could leave the root."""
        parts = object_key.split("/")
        if "\0" in object_key or any(part in ("", ".", "..") for part in parts):
            # An empty first part is an absolute key; other empty parts are `//` or a trailing `/`.
            raise UnsafeObjectKey(f"unsafe object key {object_key!r}")
        path = self.root.joinpath(*parts)
        if not path.resolve().is_relative_to(self.root):  # a symlink planted under the root
            raise UnsafeObjectKey(f"object key {object_key!r} leads outside {self.root}")
        return path

    async def upload_file(self, object_key: str, data: bytes | str,
                          mime: str = "application/octet-stream", overwrite: bool = True,
                          content_disposition: str | None = None) -> dict[str, Any]:
        path = self.path_of(object_key)
        body = data.encode() if isinstance(data, str) else data
        # Elements can be 200 MB PDFs: keep the event loop free while they are written.
        await asyncio.to_thread(_write_whole, path, body, overwrite)
        return {"object_key": object_key, "url": await self.get_read_url(object_key)}

    async def delete_file(self, object_key: str) -> bool:
        path = self.path_of(object_key)
        existed = path.is_file()
        path.unlink(missing_ok=True)
        for parent in path.parents:  # drop the element's folder once it is empty
            if parent == self.root:
                break
            try:
                parent.rmdir()
            except OSError:
                break
        return existed

    async def get_read_url(self, object_key: str) -> str:
        self.path_of(object_key)
        return f"{self.url_prefix}/{quote(object_key, safe='/')}"

    async def close(self) -> None:
        pass


def file_router(storage: LocalStorage, owner_of: OwnerOf) -> APIRouter:
    """GET {storage.url_prefix}/<key>: the file, for the owner of its thread only. owner_of maps a
    key to the identifier of that thread's author (HistoryDataLayer.file_owner)."""
    router = APIRouter()

    @router.get(storage.url_prefix + "/{object_key:path}")
    async def get_file(object_key: str,
                       user: Annotated[User | PersistedUser | None,
                                       Depends(get_current_user)]) -> FileResponse:
        if user is None:  # Chainlit's dependency says None when login is off: no owners then
            raise HTTPException(status_code=401, detail="Not logged in")
        try:
            path = storage.path_of(object_key)
        except UnsafeObjectKey:
            raise HTTPException(status_code=404, detail="Not found") from None
        # 404, not 403, for another user's file, so nobody can probe which ids exist.
        if await owner_of(object_key) != user.identifier or not path.is_file():
            raise HTTPException(status_code=404, detail="Not found")
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        inline = media_type.startswith(INLINE_TYPES)
        return FileResponse(path, media_type=media_type, filename=path.name,
                            content_disposition_type="inline" if inline else "attachment",
                            headers={"X-Content-Type-Options": "nosniff",
                                     "Cache-Control": "private, max-age=3600"})

    return router


def mount_first(app: FastAPI, router: APIRouter) -> None:
    """Add router's routes ahead of the app's own. Chainlit's server registers a catch-all
    GET /{full_path:path} (its HTML page) when imported, so routes appended later never match."""
    # A reach-in, not a hook: Chainlit's documented way to add routes is chainlit.server.app, whose
    # catch-all then answers every GET first; its public alternative, mount_chainlit, moves the
    # whole page under a sub-path of an app glm1m would serve itself instead of `chainlit run`.
    # Routes are matched in list order, so ours go first. tests/unit/test_chainlit_reach_ins.py
    # fails on a release whose routes no longer need (or no longer allow) this.
    before = len(app.router.routes)
    app.include_router(router)
    added = app.router.routes[before:]
    del app.router.routes[before:]
    app.router.routes[0:0] = added


def _write_whole(path: Path, body: bytes, overwrite: bool) -> None:
    if not overwrite and path.exists():
        raise FileExistsError(path)
    write_whole(path, body)
