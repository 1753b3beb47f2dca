"""PDF (and XPS) text, page by page, with one clear sentence for every way an upload can be
unusable; pages without a text layer read with OCR (ocr.py) when asked. Plain PyMuPDF; nothing
here imports Chainlit."""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from threading import Event

import pymupdf

from glm1m.catalog import said
from glm1m.documents.garble import is_garbled
from glm1m.documents.mupdf import MUPDF_ERRORS, normalise
from glm1m.documents.ocr import OcrMode, OcrOptions, ocr_pages
from glm1m.documents.pages import DocumentText, Page, spans
from glm1m.documents.vertical import page_text
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress, Stage, ignore
from glm1m.sizes import MB

HEADER_WINDOW = 1024  # readers accept junk before "%PDF-" within the first 1 KB (PDF 1.7, H.3)
INFLATE_ERRORS: tuple[type[Exception], ...] = (*MUPDF_ERRORS, zlib.error)


@dataclass(frozen=True)
class PdfLimits:
    max_mb: float = 200
    max_pages: int = 5000


def extract(path: Path, limits: PdfLimits = PdfLimits(), name: str | None = None,
            on_progress: OnProgress = ignore, ocr: OcrOptions | None = None,
            stop: Event | None = None, filetype: str = "pdf") -> DocumentText:
    """Every page's text, in order; on_progress runs after each page (in this thread).

    `name` is only used in messages (it may hold any characters; no path is built from it).
    `ocr`: which pages Tesseract reads (None: none, as OcrMode.NEVER); a mixed document keeps
    its text pages as they are. `filetype`: "pdf" or "xps". A damaged file is read as far as
    MuPDF can: the pages it cannot read (whole) are empty and named in the result's `lost`.
    Raises DocumentError for a file that is too large, not a PDF, damaged beyond that,
    password-protected, empty, too long, or without any extractable text, and when `stop` is
    set during OCR."""
    name = name if name is not None else path.name
    ocr = ocr or OcrOptions(OcrMode.NEVER)
    check_file(path, name, limits, filetype)
    try:
        doc = pymupdf.open(path, filetype=filetype)
    # FileDataError for unparseable bytes; plain RuntimeError ("Invalid number of pages") and
    # ValueError come from other broken structures MuPDF trips over while opening.
    except MUPDF_ERRORS as error:
        raise damaged(name) from error
    rebuilt = False
    if doc.is_pdf and doc.is_repaired and count_of(doc) == 0:
        found = pages_rebuilt(doc)
        if found is not None:
            doc.close()
            doc, rebuilt = found, True
    with doc:
        check_document(doc, path, name, limits)
        total = doc.page_count
        pages: list[Page] = []
        lost: list[int] = []
        started = Progress(Stage.READING, 0, total, unit="pages")
        garbled: list[int] = []  # pages whose text layer is a font's glyph numbers (garble.py)
        for index in range(total):
            raw = read_page(doc, index)
            if raw is None or (doc.is_pdf and doc.is_repaired and lost_in_repair(doc, index)):
                lost.append(index + 1)
            elif is_garbled(raw):
                garbled.append(index)
                raw = ""  # never passed on as text: read like a scan, or refused below
            pages.append(Page(index + 1, normalise(raw or "")))
            on_progress(replace(started, done=index + 1))
        readable = [index for index in range(total) if index + 1 not in lost]
        empty = [index for index in readable if not pages[index].text.strip()]
        if ocr.mode is OcrMode.ALWAYS:
            scanned = readable
        elif ocr.mode is OcrMode.AUTO:  # only pages that show something: a blank page costs no OCR
            scanned = [index for index in empty if index in garbled or shows_something(doc, index)]
        elif garbled:
            raise DocumentError(key="doc_garbled", name=name, count=len(garbled),
                                pages=spans(tuple(index + 1 for index in garbled)))
        else:
            scanned = []
        # For the sentence about a document without text: whether it shows anything at all.
        pictured = bool(scanned) or (len(empty) == len(readable)
                                     and any(shows_something(doc, index) for index in empty))
    if scanned:
        texts = ocr_pages(path, filetype, scanned, ocr, name, on_progress, stop)
        if stop is not None and stop.is_set():
            raise DocumentError(key="doc_read_stopped_ocr", name=name, done=len(texts), total=len(scanned))
        pages = [Page(p.number, texts.get(p.number - 1, p.text)) for p in pages]
    if not any(page.text for page in pages):
        raise no_text(name, total, tuple(lost), bool(scanned), pictured, ocr)
    return DocumentText(name, tuple(pages), total, tuple(lost), rebuilt)


def no_text(name: str, total: int, lost: tuple[int, ...], ocr_ran: bool, pictured: bool,
            ocr: OcrOptions) -> DocumentError:
    """The sentence for a document without any text, by what its pages hold and what was tried."""
    if lost:
        return damaged(name, lost)
    if ocr_ran:
        return DocumentError(key="doc_no_text_ocr", name=name, count=total, languages=ocr.languages)
    if pictured:  # OCR was off
        return DocumentError(key="doc_scanned", name=name, count=total)
    return DocumentError(key="doc_blank", name=name, count=total)


def shows_something(doc: pymupdf.Document, index: int) -> bool:
    """Whether a page without a text layer shows anything at all: it holds an image (a scan),
    or it is not one colour throughout when drawn small (drawings, text turned into outlines or
    drawn in a font without Unicode). Drawn 200 pixels on its longer side (17 dpi for A4; a
    3.84-point page of ImageMagick's was 1 pixel at 18 dpi): 0.1 ms for a blank A4 page, about
    1 ms for a drawn one."""
    try:
        page = doc.load_page(index)
        if page.get_images():
            return True
        zoom = 200 / max(page.rect.width, page.rect.height, 1)
        shown = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False,
                                colorspace=pymupdf.csGRAY).samples
    except MUPDF_ERRORS:
        return True  # let OCR try, and say what it finds
    # One byte a pixel; bytes.count, not Pixmap.is_unicolor, which took 61 ms for a blank page.
    return bool(shown) and shown.count(shown[:1]) != len(shown)


def check_file(path: Path, name: str, limits: PdfLimits, filetype: str = "pdf") -> None:
    """What can be told from the bytes, before MuPDF spends time (and memory) on them."""
    size = os.stat(path).st_size
    if size > limits.max_mb * MB:
        what = said("files_pdf") if filetype == "pdf" else said("files_of", kind=filetype.upper())
        raise DocumentError(key="doc_too_large_paged", name=name, mb=size / MB, limit=limits.max_mb,
                            what=what)
    if size == 0:
        raise DocumentError(key="doc_empty", name=name)
    if filetype != "pdf":
        return
    with path.open("rb") as f:
        head = f.read(HEADER_WINDOW)
    if b"%PDF-" not in head:
        raise DocumentError(key="doc_not_pdf", name=name)


def check_document(doc: pymupdf.Document, path: Path, name: str, limits: PdfLimits) -> None:
    if doc.needs_pass:
        raise DocumentError(key="doc_password", name=name)
    try:
        count = doc.page_count
    except MUPDF_ERRORS as error:
        raise damaged(name) from error
    if count == 0 and doc.is_pdf and doc.is_repaired and not empty_page_tree(doc):
        raise DocumentError(key="doc_page_list_lost", name=name)
    if count == 0:
        raise DocumentError(key="doc_no_pages", name=name)
    if count > limits.max_pages:
        raise DocumentError(key="doc_too_many_pages", name=name, pages=count, limit=limits.max_pages)


def count_of(doc: pymupdf.Document) -> int:
    try:
        return doc.page_count
    except MUPDF_ERRORS:
        return 0


def empty_page_tree(doc: pymupdf.Document) -> bool:
    """Whether the catalog's list of pages is there and says it holds none: a file without pages
    (its xref missing or wrong, so MuPDF repaired it), not one whose list of pages was lost."""
    try:
        kind, pages = doc.xref_get_key(doc.pdf_catalog(), "Pages")
        if kind != "xref":
            return False
        tree = int(pages.split(maxsplit=1)[0])
        return (doc.xref_get_key(tree, "Type") == ("name", "/Pages")
                and doc.xref_get_key(tree, "Count") == ("int", "0"))
    except MUPDF_ERRORS:  # ValueError is among them (an unreadable number)
        return False


def pages_rebuilt(doc: pymupdf.Document) -> pymupdf.Document | None:
    """A damaged PDF whose list of pages (its page tree) is lost, with one made of the page
    objects MuPDF's repair still found, in the order they are stored (not always the printed
    order: lost_note says so); None when no page object is left. MuPDF itself counts 0 pages."""
    try:
        found = [xref for xref in range(1, doc.xref_length())
                 if doc.xref_get_key(xref, "Type") == ("name", "/Page")]
        catalog = doc.pdf_catalog()
        if not found or catalog <= 0:
            return None
        tree = doc.get_new_xref()
        doc.update_object(tree, f"<</Type/Pages/Count {len(found)}/Kids["
                                f"{' '.join(f'{xref} 0 R' for xref in found)}]>>")
        doc.xref_set_key(catalog, "Pages", f"{tree} 0 R")
        for xref in found:
            doc.xref_set_key(xref, "Parent", f"{tree} 0 R")
        return pymupdf.open(stream=doc.tobytes(), filetype="pdf")  # MuPDF reads the new tree
    except MUPDF_ERRORS:
        return None


def read_page(doc: pymupdf.Document, index: int) -> str | None:
    """The page's text as MuPDF gives it (control characters in: garble.py reads them); None
    when MuPDF cannot read it (a loop in the page tree, a broken object): the caller names it
    among the pages lost."""
    # The Page object goes out of scope here, so MuPDF can free it before the next one loads.
    try:
        return page_text(doc.load_page(index))
    except MUPDF_ERRORS:
        return None


def lost_in_repair(doc: pymupdf.Document, index: int) -> bool:
    """In a file MuPDF had to rebuild, whether a page came back less than whole: its page object
    is gone (MuPDF hands an empty page in its place), or a compressed content stream of it
    stops before its end (MuPDF reads what is left without an error)."""
    try:
        page = doc.load_page(index)
        if doc.xref_get_key(page.xref, "Type") != ("name", "/Page"):
            return True
        for xref in page.get_contents():
            raw = doc.xref_stream_raw(xref)
            if raw is None:  # the stream's data is gone (a file cut inside it): seen on a half PDF
                return True
            if doc.xref_get_key(xref, "Filter") == ("name", "/FlateDecode"):
                inflate = zlib.decompressobj()
                inflate.decompress(raw)
                if not inflate.eof:
                    return True
    except INFLATE_ERRORS:
        return True
    return False


def damaged(name: str, pages: int | tuple[int, ...] | list[int] | None = None) -> DocumentError:
    if isinstance(pages, int):
        pages = (pages,)
    if not pages:
        return DocumentError(key="doc_damaged", name=name)
    return DocumentError(key="doc_damaged_pages", name=name, count=len(pages), pages=spans(tuple(pages)))
