"""Uploads, checked before Chainlit reads them.

Chainlit 2.12's POST /project/file has FastAPI parse the whole multipart body first, then reads the
file whole into memory, and only then compares its size with config.toml's max_size_mb; it takes
any type, and answers an empty file with HTTP 500 and a Python message. This route, mounted in
front of it, reads the body itself as it streams in and refuses, with a sentence:
- 413 at once when Content-Length is over the largest limit (nothing is read);
- 415 as soon as the file's part headers name a type glm1m does not read;
- 413 as soon as its Content-Length, or its bytes counted so far, pass that type's limit;
- 400 for an empty file.
The file is spooled as it arrives (to disk past 1 MB), so memory stays flat whatever is sent; only
a file within its limit reaches Chainlit's own route, typed as its kind.

A refused body is read to its end and dropped when it is no larger than what the page may send:
an HTTP client still sending when the server closes sees a broken connection, not the sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import PurePosixPath
from tempfile import SpooledTemporaryFile
from typing import Any

from chainlit.config import config
from chainlit.server import UserParam, upload_file as chainlit_upload_file
from chainlit.session import WebsocketSession
from fastapi import APIRouter, HTTPException, Request, UploadFile
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.datastructures import Headers

from glm1m.catalog import said
from glm1m.chainlit_app.i18n import EN, language_of, t
from glm1m.chainlit_app.refusals import say_refused
from glm1m.documents.formats import FORMATS
from glm1m.settings import Settings
from glm1m.sizes import MB
from glm1m.translation.formats import table_formats

FRAMING = 64 * 1024  # the multipart boundaries and part headers around the one file


@dataclass(frozen=True)
class FileKind:
    name: str  # as a sentence says it
    suffixes: tuple[str, ...]
    mime: str  # the type the stored file gets, whatever the browser guessed
    limit_setting: str  # the Settings field holding its limit, in MB
    use: str  # what glm1m does with it: a glm1m/catalog id

    def limit(self, settings: Settings) -> int:
        return int(getattr(settings, self.limit_setting) * MB)

    def limit_words(self, settings: Settings) -> str:
        return f"{getattr(settings, self.limit_setting):g} MB"


# The files glm1m reads, from the two registries: a new reader (a document format in
# glm1m/documents/formats.py, a table format in glm1m/translation/formats.py) is added there, and
# the page's file picker, these checks and their sentences follow.
KINDS = (
    # Every document format, under the documents' limit.
    *(FileKind(f.name, f.suffixes, f.mime, "document_max_mb", "use_ask")
      for f in FORMATS),
    # Every table format, each under its own limit.
    *(FileKind(f.name, f.suffixes, f.mime, f.limit_setting, f.use) for f in table_formats()),
)


def kind_of(filename: str) -> FileKind | None:
    suffix = PurePosixPath(filename).suffix.lower()
    return next((kind for kind in KINDS if suffix in kind.suffixes), None)


def unsupported(filename: str, lang: str = EN) -> str:
    uses = dict.fromkeys(k.use for k in KINDS)  # kinds of one use named together, in order
    named = [[k.name for k in KINDS if k.use == use] for use in uses]
    offers = [t(lang, "upload_offer", use=said(use), kinds=n[0] if len(n) == 1 else
                t(lang, "list_sep").join(n[:-1]) + t(lang, "or") + n[-1])
              for n, use in zip(named, uses, strict=True)]
    return t(lang, "upload_unsupported", name=filename, offers=t(lang, "upload_offers_or").join(offers))


def too_large(filename: str, kind: FileKind, settings: Settings, lang: str = EN) -> str:
    return t(lang, "upload_too_large", name=filename, limit=kind.limit_words(settings), kind=kind.name,
             setting=f"GLM1M_{kind.limit_setting.upper()}")


def too_large_for_any(size: int, settings: Settings, lang: str = EN) -> str:
    by_limit = {k.limit_setting: [j for j in KINDS if j.limit_setting == k.limit_setting] for k in KINDS}
    limits = [t(lang, "upload_limit", kinds="/".join(j.name for j in same),
                limit=same[0].limit_words(settings)) for same in by_limit.values()]
    return t(lang, "upload_too_large_for_any", size=size / MB,
             limits=t(lang, "p_sep").join(limits))


def configure_page(settings: Settings) -> None:
    """The page's file picker offers only these kinds, up to the largest limit. (Its size check,
    alone in Chainlit 2.12, counts 10⁶-byte megabytes, so the limit is rounded up to them: the
    refusals seen are the sentences here, in glm1m's 1024² megabytes.)"""
    upload = config.features.spontaneous_file_upload
    if upload is not None:
        upload.accept = {kind.mime: list(kind.suffixes) for kind in KINDS}
        upload.max_size_mb = math.ceil(max(kind.limit(settings) for kind in KINDS) / 1_000_000)


class Refused(Exception):
    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status, self.sentence = status, sentence


class FilePart:
    """The file in a multipart body, spooled as the parser hands it over; raises Refused from
    the parser's callbacks as soon as its headers or its size say so."""

    def __init__(self, settings: Settings, declared: int | None, lang: str = EN) -> None:
        self.settings, self.declared, self.lang = settings, declared, lang
        self.headers: dict[bytes, bytes] = {}
        self._name = self._value = b""
        self.file: SpooledTemporaryFile[bytes] | None = None
        self.filename = ""
        self.kind: FileKind | None = None
        self.size = 0
        self._in_file = False

    def callbacks(self) -> Any:
        return {"on_part_begin": self.on_part_begin, "on_header_field": self.on_header_field,
                "on_header_value": self.on_header_value, "on_header_end": self.on_header_end,
                "on_headers_finished": self.on_headers_finished, "on_part_data": self.on_part_data,
                "on_part_end": self.on_part_end}

    def on_part_begin(self) -> None:
        self.headers = {}

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def on_header_end(self) -> None:
        self.headers[self._name.lower()] = self._value
        self._name = self._value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.headers.get(b"content-disposition"))
        if b"filename" not in options:
            return  # a plain form field: not kept (the page sends none)
        if self.file is not None:
            raise Refused(400, t(self.lang, "upload_one_file"))
        self.filename = _decoded(options[b"filename"])
        self.kind = kind_of(self.filename)
        if self.kind is None:
            raise Refused(415, unsupported(self.filename, self.lang))
        if self.declared is not None and self.declared > self.kind.limit(self.settings) + FRAMING:
            raise Refused(413, too_large(self.filename, self.kind, self.settings, self.lang))
        self.file = SpooledTemporaryFile(max_size=MB)
        self._in_file = True

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if not self._in_file:
            return
        assert self.file is not None and self.kind is not None
        self.size += end - start
        if self.size > self.kind.limit(self.settings):
            raise Refused(413, too_large(self.filename, self.kind, self.settings, self.lang))
        self.file.write(data[start:end])

    def on_part_end(self) -> None:
        self._in_file = False

    def close(self) -> None:
        if self.file is not None:
            self.file.close()


async def receive_file(request: Request, settings: Settings, lang: str = EN) -> UploadFile:
    """The uploaded file, read from the request as it streams in; raises HTTPException with the
    status and sentence (in `lang`) of the first check it fails."""
    ctype, params = parse_options_header(request.headers.get("content-type"))
    if ctype != b"multipart/form-data" or b"boundary" not in params:
        raise HTTPException(status_code=400, detail=t(lang, "upload_not_multipart"))
    largest = max(kind.limit(settings) for kind in KINDS) + FRAMING
    declared = _content_length(request)
    if declared is not None and declared > largest:
        raise HTTPException(status_code=413, detail=too_large_for_any(declared, settings, lang))
    part = FilePart(settings, declared, lang)
    parser = MultipartParser(params[b"boundary"], part.callbacks())
    received, refused = 0, None
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if refused is None:
                try:
                    if received > largest:
                        raise Refused(413, too_large_for_any(received, settings, lang))
                    parser.write(chunk)
                except Refused as error:
                    refused = error
                    part.close()
                except FormParserError:
                    refused = Refused(400, t(lang, "upload_cut_short"))
            elif received > largest:
                break  # more than the page ever sends: stop reading, the connection closes
        if refused is None:
            parser.finalize()
    except BaseException:
        part.close()
        raise
    if refused is not None:
        raise HTTPException(status_code=refused.status, detail=refused.sentence)
    if part.file is None or part.kind is None:
        raise HTTPException(status_code=400, detail=t(lang, "upload_no_file"))
    if part.size == 0:
        part.close()
        raise HTTPException(status_code=400, detail=t(lang, "upload_empty", name=part.filename))
    part.file.seek(0)
    return UploadFile(file=part.file, size=part.size, filename=part.filename,  # type: ignore[arg-type]
                      headers=Headers({"content-type": part.kind.mime}))


def upload_guard(settings: Settings) -> APIRouter:
    configure_page(settings)
    router = APIRouter()

    # A reach-in, not a hook: Chainlit 2.12's POST /project/file has FastAPI read the whole body
    # before its own checks, and no setting or callback runs before that; tests/unit/
    # test_chainlit_reach_ins.py fails if Chainlit moves that route or changes its parameters.
    @router.post("/project/file")
    async def upload_file(request: Request, current_user: UserParam, session_id: str,
                          ask_parent_id: str | None = None) -> Any:
        # Chainlit's route says this too, but only after the body has been read.
        session = WebsocketSession.get_by_id(session_id)
        if session is None:
            raise HTTPException(status_code=404, detail="Session not found")
        # The refusals are said in the page's language (a zh-CN browser reads Chinese).
        try:
            file = await receive_file(request, settings, language_of(session.language))
        except HTTPException as refused:
            await say_refused(session, str(refused.detail))
            raise
        return await chainlit_upload_file(current_user=current_user, session_id=session_id,
                                          file=file, ask_parent_id=ask_parent_id)

    return router


def _content_length(request: Request) -> int | None:
    try:
        return int(request.headers["content-length"])
    except (KeyError, ValueError):
        return None


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")
