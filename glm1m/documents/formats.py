"""Every document format glm1m reads, the one list, and `read_document`: a file in, its text with
location markers out (pages for paged formats, sections for reflowing ones), whatever the format.

PyMuPDF (MuPDF 1.28) opens all but Markdown and plain text itself; those two are read as text
(text.py), because MuPDF shows a .md file's markup as text and knows no encoding but UTF-8.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from glm1m.catalog import Said, said
from glm1m.documents.ocr import OcrOptions
from glm1m.documents.pages import DocumentText, Kind
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, ignore
from glm1m.settings import Settings


@dataclass(frozen=True)
class Format:
    name: str  # as a sentence says it
    suffixes: tuple[str, ...]
    mime: str  # the type an upload of it is stored with
    kind: Kind
    reader: str  # "paged" (pdf.py), "reflow" (reflow.py) or "text" (text.py)
    filetype: str  # what PyMuPDF is told the file is


FORMATS = (
    Format("PDF", (".pdf",), "application/pdf", Kind.PAGE, "paged", "pdf"),
    Format("XPS", (".xps", ".oxps"), "application/oxps", Kind.PAGE, "paged", "xps"),
    Format("DOCX", (".docx",), "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
           Kind.SECTION, "reflow", "docx"),
    Format("EPUB", (".epub",), "application/epub+zip", Kind.SECTION, "reflow", "epub"),
    Format("MOBI", (".mobi",), "application/x-mobipocket-ebook", Kind.SECTION, "reflow", "mobi"),
    Format("FB2", (".fb2",), "application/x-fictionbook+xml", Kind.SECTION, "reflow", "fb2"),
    Format("HTML", (".html", ".htm", ".xhtml"), "text/html", Kind.SECTION, "reflow", "html"),
    Format("Markdown", (".md", ".markdown"), "text/markdown", Kind.SECTION, "text", "md"),
    Format("text", (".txt",), "text/plain", Kind.SECTION, "text", "txt"),
)


# The registry by suffix: what read_document, the upload checks and the upload sorting look up.
BY_SUFFIX: dict[str, Format] = {suffix: f for f in FORMATS for suffix in f.suffixes}


def format_of(filename: str) -> Format | None:
    return BY_SUFFIX.get(PurePosixPath(filename).suffix.lower())


def named() -> Said:
    """"PDF, XPS, DOCX, ... or text": for sentences, in either language."""
    shown = [f.name for f in FORMATS]
    return said("list_or", some=shown[:-1], last=shown[-1])


ZIPPED = ("docx", "epub", "xps")  # a zip of XML parts, which MuPDF unpacks as it reads


@dataclass(frozen=True)
class ReadOptions:
    max_mb: float = 200
    max_pages: int = 5000
    ocr: OcrOptions = OcrOptions()
    # A zipped format past this, by its zip directory, is refused before MuPDF unpacks any of it:
    # a zip bomb (a few KB that unpack to gigabytes) would otherwise fill the memory. A 200 MB
    # DOCX of text unpacks to about ten times that at most; pictures barely unpack at all.
    max_unpacked_mb: float = 2000

    @classmethod
    def of(cls, settings: Settings, ocr: str | None = None) -> ReadOptions:
        return cls(settings.pdf_max_mb, settings.pdf_max_pages, OcrOptions.of(settings, ocr))


MB = 1024 * 1024


def read_document(path: Path, options: ReadOptions = ReadOptions(), name: str | None = None,
                  on_progress: OnProgress = ignore, stop: threading.Event | None = None
                  ) -> DocumentText:
    """The text the model reads, by the file's format (its name's suffix). on_progress runs in
    this thread. Raises DocumentError, with what to do, for a file that cannot be read."""
    name = name if name is not None else path.name
    found = format_of(name)
    if found is None:
        raise DocumentError(key="doc_not_a_document", name=name, formats=named())
    if found.filetype in ZIPPED:
        check_zip(path, name, found, options)
    if found.reader == "paged":
        from glm1m.documents.pdf import PdfLimits, extract

        return extract(path, PdfLimits(options.max_mb, options.max_pages), name, on_progress,
                       options.ocr, stop, found.filetype)
    check_size(path, name, found, options)
    if found.reader == "text":
        from glm1m.documents.text import read_text_file

        return read_text_file(path, name, markdown=found.filetype == "md")
    from glm1m.documents.isolated import read_isolated
    from glm1m.documents.reflow import read_reflowing

    # In a process of its own: MuPDF's layout cannot be stopped otherwise (isolated.py says why).
    return read_isolated(read_reflowing, (path, found.filetype, name), name, on_progress, stop)


def check_size(path: Path, name: str, found: Format, options: ReadOptions) -> None:
    size = path.stat().st_size
    if size == 0:
        raise DocumentError(key="doc_empty", name=name)
    if size > options.max_mb * MB:
        raise DocumentError(key="doc_too_large", name=name, mb=size / MB, limit=options.max_mb)


def check_zip(path: Path, name: str, found: Format, options: ReadOptions) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip: MuPDF says it cannot open it, with the sentence for that
    if unpacked > options.max_unpacked_mb * MB:
        raise DocumentError(key="doc_unpacks_too_large", name=name, mb=unpacked / MB,
                            limit=options.max_unpacked_mb, kind=found.name)


async def read_document_async(path: Path, options: ReadOptions = ReadOptions(),
                              name: str | None = None, on_progress: OnProgress = ignore
                              ) -> DocumentText:
    """read_document in a worker thread, so the event loop goes on; cancelling this stops the
    reading (OCR workers included) and returns only once it has stopped."""
    stop = threading.Event()
    task = asyncio.ensure_future(asyncio.to_thread(read_document, path, options, name,
                                                   on_progress, stop))
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait({task})  # the OCR processes are gone once the thread returns
        if not task.cancelled():
            task.exception()  # its "stopped" sentence: nobody is left to read it
        raise
