"""Chainlit's own upload endpoint answers an empty file with HTTP 500 and a Python message
("Either path or content must be provided to persist a file"). This route, mounted in front of it,
answers that case with a sentence and hands every other upload to Chainlit unchanged."""

from __future__ import annotations

from chainlit.server import UserParam, upload_file as chainlit_upload_file
from fastapi import APIRouter, HTTPException, UploadFile


def empty_upload_guard() -> APIRouter:
    router = APIRouter()

    @router.post("/project/file")
    async def upload_file(current_user: UserParam, session_id: str, file: UploadFile,
                          ask_parent_id: str | None = None):
        if not await file.read(1):
            raise HTTPException(status_code=400, detail=(
                f"{file.filename} is empty (0 bytes): there is nothing to read. Attach the file "
                f"again with its content."))
        await file.seek(0)
        return await chainlit_upload_file(current_user=current_user, session_id=session_id,
                                          file=file, ask_parent_id=ask_parent_id)

    return router
