"""The upload route's checks, on request bodies streamed in as the server receives them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import HTTPException
from starlette.requests import Request

from glm1m.chainlit_app.upload_guard import kind_of, receive_file, too_large
from glm1m.settings import Settings
from glm1m.sizes import MB

SETTINGS = Settings(document_max_mb=2, csv_max_mb=1, xlsx_max_mb=1, _env_file=None)
CHUNK = 64 * 1024


def multipart(name: str, mime: str, size: int) -> tuple[bytes, bytes, int]:
    """Head, tail, and the whole length of a one-file form whose content is `size` bytes."""
    head = (f'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: {mime}\r\n\r\n").encode()
    tail = b"\r\n--XyZ--\r\n"
    return head, tail, len(head) + size + len(tail)


class Upload:
    """A POST whose body is produced chunk by chunk; counts what the server pulled."""

    def __init__(self, name: str, mime: str, size: int, declare: bool = True,
                 fill: bytes = b"a,b\n") -> None:
        self.head, self.tail, length = multipart(name, mime, size)
        self.size, self.fill, self.pulled = size, fill, 0
        headers = [(b"content-type", b"multipart/form-data; boundary=XyZ")]
        if declare:
            headers.append((b"content-length", str(length).encode()))
        self.chunks = self._chunks()
        self.request = Request({"type": "http", "method": "POST", "path": "/project/file",
                                "query_string": b"", "headers": headers}, self._receive)

    def _chunks(self) -> Iterator[bytes]:
        yield self.head
        body = (self.fill * (CHUNK // len(self.fill) + 1))[:CHUNK]
        left = self.size
        while left > 0:
            yield body[:min(left, CHUNK)]
            left -= CHUNK
        yield self.tail

    async def _receive(self) -> dict:
        chunk = next(self.chunks, None)
        if chunk is None:
            return {"type": "http.request", "body": b"", "more_body": False}
        self.pulled += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}


async def refused(upload: Upload) -> HTTPException:
    with pytest.raises(HTTPException) as caught:
        await receive_file(upload.request, SETTINGS)
    return caught.value


async def test_a_file_within_its_limit_arrives_whole_typed_as_its_kind() -> None:
    upload = Upload("合同 (v2).csv", "application/vnd.ms-excel", 300_000)  # Excel's type for CSV
    file = await receive_file(upload.request, SETTINGS)
    assert file.filename == "合同 (v2).csv" and file.content_type == "text/csv"
    assert file.size == 300_000 and await file.read() == (b"a,b\n" * 75_000)


async def test_a_type_glm1m_does_not_read_is_refused_by_its_headers() -> None:
    error = await refused(Upload("holiday.zip", "application/zip", 5 * CHUNK))
    assert error.status_code == 415
    assert error.detail == ("holiday.zip is not a file glm1m reads: attach a PDF, XPS, DOCX, EPUB, "
                            "MOBI, FB2, HTML, Markdown or text (to summarise it or ask about it) or a "
                            "CSV (to translate a column) or a XLSX (to translate columns of a sheet).")


async def test_a_file_over_its_kinds_limit_is_refused_whether_or_not_its_length_is_declared() -> None:
    for declare in (True, False):
        error = await refused(Upload("big.csv", "text/csv", int(1.5 * MB), declare=declare))
        assert error.status_code == 413
        assert error.detail == "big.csv is larger than 1 MB, the limit for CSV files (GLM1M_CSV_MAX_MB)."
    ok = await receive_file(Upload("big.pdf", "application/pdf", int(1.5 * MB)).request, SETTINGS)
    assert ok.size == int(1.5 * MB)  # the PDF limit is its own
    for name in ("big.pdf", "big.docx", "big.md"):  # every document format, one limit and its name
        kind = kind_of(name)
        assert kind is not None and too_large(name, kind, SETTINGS) == (
            f"{name} is larger than 2 MB, the limit for {kind.name} files (GLM1M_DOCUMENT_MAX_MB).")


async def test_a_body_larger_than_any_limit_is_refused_before_it_is_read() -> None:
    upload = Upload("huge.pdf", "application/pdf", 50 * MB)
    error = await refused(upload)
    assert error.status_code == 413 and upload.pulled == 0
    assert error.detail == ("The upload is 50 MB, more than glm1m takes for any file (PDF/XPS/DOCX/EPUB/"
                            "MOBI/FB2/HTML/Markdown/text up to 2 MB, CSV up to 1 MB, XLSX up to 1 MB).")
    undeclared = Upload("huge.pdf", "application/pdf", 50 * MB, declare=False)
    assert (await refused(undeclared)).status_code == 413
    assert undeclared.pulled < 2 * MB + 2 * CHUNK + 64 * 1024  # reading stopped past the largest limit


async def test_an_empty_file_gets_a_sentence() -> None:
    error = await refused(Upload("nothing.pdf", "application/pdf", 0))
    assert error.status_code == 400 and error.detail.startswith("nothing.pdf is empty (0 bytes)")
