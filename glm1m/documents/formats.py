"""Every document format glm1m reads, the one list, and `read_document`: a file in, its text with
location markers out (pages for paged formats, sections for reflowing ones), whatever the format.

PyMuPDF (MuPDF 1.28) opens all but Markdown and plain text itself; those two are read as text
(text.py), because MuPDF shows a .md file's markup as text and knows no encoding but UTF-8.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath

from glm1m.catalog import Said, said
from glm1m.documents.limits import check_unpacked
from glm1m.documents.ocr import OcrOptions
from glm1m.documents.pages import DocumentText, Kind
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, ignore
from glm1m.settings import Settings
from glm1m.sizes import MB


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
BY_FILETYPE: dict[str, Format] = {f.filetype: f for f in FORMATS}


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
    # The limits of limits.py, as Settings' defaults: a zipped format past these, by its zip
    # directory, is refused before MuPDF unpacks any of it (a zip bomb would fill the memory);
    # a reflowing one laid out to more A4 pages, before its text is read; a user with as many
    # documents being read, before this one is.
    max_unpacked_mb: float = 300
    max_unpack_ratio: float = 100
    max_reflow_pages: int = 5000
    reads_per_user: int = 2

    @classmethod
    def of(cls, settings: Settings, ocr: str | None = None) -> ReadOptions:
        return cls(settings.document_max_mb, settings.pdf_max_pages, OcrOptions.of(settings, ocr),
                   settings.document_max_unpacked_mb, settings.document_max_unpack_ratio,
                   settings.reflow_max_pages, settings.reads_per_user)



def read_document(path: Path, options: ReadOptions = ReadOptions(), name: str | None = None,
                  on_progress: OnProgress = ignore, stop: threading.Event | None = None
                  ) -> DocumentText:
    """The text the model reads, by the file's format (its name's suffix). on_progress runs in
    this thread. Raises DocumentError, with what to do, for a file that cannot be read."""
    name = name if name is not None else path.name
    found = format_of(name)
    if found is None:
        raise DocumentError(key="doc_not_a_document", name=name, formats=named())
    found = by_content(path, found)
    if found.filetype in ZIPPED:
        check_unpacked(path, name, found.name, options.max_unpacked_mb, options.max_unpack_ratio)
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
    reader = partial(read_reflowing, max_pages=options.max_reflow_pages)
    return read_isolated(reader, (path, found.filetype, name), name, on_progress, stop)


def by_content(path: Path, named_as: Format) -> Format:
    """The format the bytes say, where they say PDF, DOCX or EPUB and the name another: a PDF
    renamed .docx was laid out by MuPDF as a reflowing document (82 sections instead of its 117
    pages, every citation a section), and a DOCX renamed .pdf was refused as no PDF. Any other
    disagreement is left to the reader of the named format, which says what it finds."""
    import zipfile

    try:
        with path.open("rb") as file:
            head = file.read(1024)
        if b"%PDF-" in head:  # readers take junk before the header within the first 1 KB
            return BY_FILETYPE["pdf"] if named_as.filetype not in ("pdf", "xps") else named_as
        if head.startswith(b"PK") and named_as.filetype in ("pdf", "docx", "epub"):
            with zipfile.ZipFile(path) as archive:
                parts = set(archive.namelist())
            if "word/document.xml" in parts:
                return BY_FILETYPE["docx"]
            if "META-INF/container.xml" in parts:
                return BY_FILETYPE["epub"]
    except (OSError, zipfile.BadZipFile, ValueError):
        pass  # the named format's reader says what is wrong with it
    return named_as


def check_size(path: Path, name: str, found: Format, options: ReadOptions) -> None:
    size = path.stat().st_size
    if size == 0:
        raise DocumentError(key="doc_empty", name=name)
    if size > options.max_mb * MB:
        raise DocumentError(key="doc_too_large", name=name, mb=size / MB, limit=options.max_mb)


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
