"""PDF (and XPS) text, page by page, with one clear sentence for every way an upload can be
unusable; pages without a text layer read with OCR (ocr.py) when asked. Plain PyMuPDF; nothing
here imports Chainlit."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from threading import Event

import pymupdf

from glm1m.documents.ocr import OcrMode, OcrOptions, ocr_pages
from glm1m.documents.pages import DocumentText, Page
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress, ignore
from glm1m.settings import Settings

MB = 1024 * 1024  # Chainlit's upload limit (max_size_mb) counts megabytes this way too
HEADER_WINDOW = 1024  # readers accept junk before "%PDF-" within the first 1 KB (PDF 1.7, H.3)
EOF_WINDOW = 1024  # ... and look for "%%EOF" within the last 1 KB
TAIL_READ = 64 * 1024  # enough to see past trailing NUL/whitespace padding some uploaders add
TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)  # ASCII only: U+3000 may be deliberate
MANY_BLANK_LINES = re.compile(r"\n{4,}")  # 4 newlines = 3 blank lines



@dataclass(frozen=True)
class PdfLimits:
    max_mb: float = 200
    max_pages: int = 5000

    @classmethod
    def of(cls, settings: Settings) -> PdfLimits:
        return cls(settings.pdf_max_mb, settings.pdf_max_pages)


def extract(path: Path, limits: PdfLimits = PdfLimits(), name: str | None = None,
            on_progress: OnProgress = ignore, ocr: OcrOptions | None = None,
            stop: Event | None = None, filetype: str = "pdf") -> DocumentText:
    """Every page's text, in order; on_progress runs after each page (in this thread).

    `name` is only used in messages (it may hold any characters; no path is built from it).
    `ocr`: which pages Tesseract reads (None: none, as OcrMode.NEVER); a mixed document keeps
    its text pages as they are. `filetype`: "pdf" or "xps". Raises DocumentError for a file
    that is too large, not a PDF, damaged, password-protected, empty, too long, or without any
    extractable text (scanned, with OCR off), and when `stop` is set during OCR."""
    name = name if name is not None else path.name
    ocr = ocr or OcrOptions(OcrMode.NEVER)
    check_file(path, name, limits, filetype)
    try:
        doc = pymupdf.open(path, filetype=filetype)
    # FileDataError for unparseable bytes; plain RuntimeError ("Invalid number of pages") and
    # ValueError come from other broken structures MuPDF trips over while opening.
    except (pymupdf.FileDataError, RuntimeError, ValueError) as error:
        raise damaged(name) from error
    with doc:
        check_document(doc, path, name, limits)
        total = doc.page_count
        pages: list[Page] = []
        started = Progress("reading", 0, total, unit="pages")
        for index in range(total):
            pages.append(Page(index + 1, read_page(doc, index, name)))
            on_progress(replace(started, done=index + 1))
        scanned = [index for index in range(total) if wants_ocr(doc, index, pages[index].text, ocr.mode)]
    if scanned:
        texts = ocr_pages(path, filetype, scanned, ocr, name, on_progress, stop)
        if stop is not None and stop.is_set():
            raise DocumentError(f"Stopped reading {name} ({len(texts):,} of {len(scanned):,} "
                                f"scanned pages were read); attach it again to start over.")
        pages = [Page(p.number, texts.get(p.number - 1, p.text)) for p in pages]
    if not any(page.text for page in pages) and scanned:
        raise DocumentError(
            f"{name} has no text on {where_all(total)}, not even with OCR ({ocr.languages}): its "
            f"pages are blank, or too faint or small to read. Scan it again at 300 dpi and upload "
            f"that.")
    if not any(page.text for page in pages):
        raise DocumentError(
            f"{name} has no text that can be extracted on {where_all(total)}: it is "
            f"probably scanned or made of images. Run OCR on it first (for example "
            f"`ocrmypdf --language chi_sim+eng {shlex.quote(name)} ocr.pdf`) and upload the result, "
            f"or let glm1m read it with OCR (`--ocr auto`, GLM1M_OCR=auto).")
    return DocumentText(name, tuple(pages), total)


def where_all(pages: int) -> str:
    return "its only page" if pages == 1 else f"any of its {pages:,} pages"


def wants_ocr(doc: pymupdf.Document, index: int, text: str, mode: OcrMode) -> bool:
    """always: every page; auto: a page without a text layer that shows something (an image or
    drawn shapes: a scan, or text turned into outlines), so a blank page costs no OCR."""
    if mode is OcrMode.ALWAYS:
        return True
    if mode is OcrMode.NEVER or text.strip():
        return False
    page = doc.load_page(index)
    return bool(page.get_image_info() or page.get_cdrawings())


def check_file(path: Path, name: str, limits: PdfLimits, filetype: str = "pdf") -> None:
    """What can be told from the bytes, before MuPDF spends time (and memory) on them."""
    size = os.stat(path).st_size
    what = "PDFs" if filetype == "pdf" else f"{filetype.upper()} files"
    if size > limits.max_mb * MB:
        raise DocumentError(
            f"{name} is {size / MB:.1f} MB, over the {limits.max_mb:g} MB limit for {what}. "
            f"Split it into smaller files (or compress its images) and upload them one at a time.")
    if size == 0:
        raise DocumentError(f"{name} is empty (0 bytes). Upload the file again; if it is empty "
                            f"on your computer too, export or download it again.")
    if filetype != "pdf":
        return
    with path.open("rb") as f:
        head = f.read(HEADER_WINDOW)
    if b"%PDF-" not in head:
        raise DocumentError(
            f"{name} is not a PDF (its content is not PDF, whatever its name says). Open it in "
            f"the program that made it and export or print it as PDF, then upload that.")


def check_document(doc: pymupdf.Document, path: Path, name: str, limits: PdfLimits) -> None:
    if doc.needs_pass:
        raise DocumentError(
            f"{name} is password-protected, so its text cannot be read. Remove the password "
            f"(open it with the password and save or print a copy without one) and upload again.")
    if doc.is_pdf and doc.is_repaired and not ends_complete(path):
        # MuPDF rebuilds a cut-off file without complaint and returns empty text for the pages
        # it lost; a summary of such a file would silently miss its end.
        raise damaged(name)
    try:
        count = doc.page_count
    except (RuntimeError, ValueError) as error:
        raise damaged(name) from error
    if count == 0:
        raise DocumentError(f"{name} has no pages: there is nothing to read. Export or download "
                            f"it again and upload the new copy.")
    if count > limits.max_pages:
        raise DocumentError(
            f"{name} has {count:,} pages, over the {limits.max_pages:,}-page limit. Split it into "
            f"parts of at most {limits.max_pages:,} pages and upload them one at a time.")


def read_page(doc: pymupdf.Document, index: int, name: str) -> str:
    # The Page object goes out of scope here, so MuPDF can free it before the next one loads.
    try:
        text = doc.load_page(index).get_text()
    except (RuntimeError, ValueError) as error:
        raise damaged(name, page=index + 1) from error
    return normalise(text)


def normalise(text: str) -> str:
    """Trailing spaces off each line, runs of 3+ blank lines cut to 2; nothing else touched."""
    text = TRAILING_SPACE.sub("", text)
    return MANY_BLANK_LINES.sub("\n\n\n", text).strip("\n")


def ends_complete(path: Path) -> bool:
    """Whether the file ends the way a fully written PDF does: "%%EOF" in its last kilobyte,
    not counting NUL or whitespace padding after it."""
    with path.open("rb") as f:
        f.seek(max(0, os.stat(path).st_size - TAIL_READ))
        tail = f.read().rstrip(b"\x00 \t\r\n\f")
    return b"%%EOF" in tail[-EOF_WINDOW:]


def damaged(name: str, page: int | None = None) -> DocumentError:
    where = f" (page {page} cannot be read)" if page is not None else ""
    return DocumentError(
        f"{name} is damaged or incomplete{where}, so its text cannot be read. Download or export "
        f"it again (an interrupted download cuts a PDF short) and upload the new copy.")

