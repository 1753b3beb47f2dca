"""DOCX, EPUB, HTML, FB2 and MOBI through PyMuPDF (MuPDF 1.28 lays each of them out itself), cut
into sections at the headings of the document's outline: MuPDF builds it from DOCX heading styles,
HTML's <h1>-<h6>, an EPUB's table of contents and FB2's sections."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pymupdf

from glm1m.documents.limits import check_laid_out
from glm1m.documents.mupdf import MUPDF_ERRORS, normalise
from glm1m.documents.pages import DocumentText
from glm1m.documents.pdf import damaged
from glm1m.documents.sections import Block, document
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress, Stage, ignore

# MuPDF lays a reflowing document out on pages of this size. Tall pages: a paragraph that runs
# over a page end comes back as two blocks (two paragraph numbers), so few page ends are better;
# 20 A4 pages high kept the 547 KB nettle manual (HTML) to 5 pages, laid out in 0.03 s.
LAYOUT_WIDTH = 595
LAYOUT_HEIGHT = 842 * 20
HEADING_SLACK = 1.0  # points: an outline target sits at or above its heading's top
LOOKAHEAD_BLOCKS = 4
LOOKAHEAD_PT = 72
WORDS = re.compile(r"\W+")
# MuPDF lays preformatted text out as written, one line however long, and what runs past the
# page's right edge is never drawn, so get_text lost it: an HTML <pre> line of 479 characters
# ended after ~88 (issue 33). Wrapped, the line is kept whole over several lines; !important
# because a page's own rule (pre.x { white-space: pre }) outranks a plain user rule. A single
# word wider than the page is still cut: MuPDF 1.28 breaks no word, in <pre> or <p>.
KEEP_LONG_LINES = ("pre, pre *, xmp, listing, plaintext { white-space: pre-wrap !important }")

# MuPDF 1.28.5 (PyMuPDF 2.0) decodes an HTML page's character references twice: its HTML5 parser
# decodes them, then each text node goes through its XML entity decoding again, so `&amp;lt;`
# read "<" where a browser shows "&lt;", and `AT&amp;amp;T` "AT&T" (Python-Markdown's test pages,
# issue 33). Measured: the second pass knows HTML 4's names and numeric references, only with
# their ";" (`&amp;lt` and `&amp;foo;` stayed), runs once (`&amp;amp;amp;` read "&amp;"), in
# text, <pre>, <code>, <textarea>, <noscript>, headings and the outline alike; raw text (<xmp>,
# <plaintext>, <iframe>, <noembed>, <style>, <script>), which HTML leaves undecoded, gets that
# pass alone. So each "&" a browser shows is written `&amp;amp;` in text (the first decode leaves
# `&amp;`, the second "&") and `&amp;` in raw text; other references, tags, attributes and
# comments stay as written. Reading the page as "xhtml" instead is no fix: a page that is not
# well-formed XML falls back to the same HTML reading, and one with two roots kept only the first.
# A tag or comment (HTML5's tokenizer: quotes only after "=", one left open at the end runs to it).
MARKUP = re.compile(r"<!--(?:-?>|.*?(?:--!?>|\Z))|<[!?][^>]*>?|</[^>]*(?:>|\Z)"
                    r"|<([A-Za-z][^\t\n\f />]*)(?:=\s*(?:\"[^\"]*\"|'[^']*')|[^>])*+(?:>|\Z)",
                    re.DOTALL)
RAW_TEXT = {"script", "style", "xmp", "iframe", "noembed", "noframes", "plaintext"}
ESCAPABLE_RAW_TEXT = {"textarea", "title"}  # references decoded, tags not
REFERENCE = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?)?")


def shown_ampersand(reference: re.Match[str]) -> str:
    """A reference as written, unless what HTML reads there begins with "&" (a bare one, `&amp;`,
    `&#38;`, `&ampx`): then that "&" written so MuPDF's two decodes leave it."""
    read = html.unescape(reference.group())
    return "&amp;amp;" + read[1:] if read.startswith("&") else reference.group()


def decoded_once(page: str) -> str:
    """The page written so MuPDF shows what a browser shows (see above)."""
    out: list[str] = []
    at = 0
    while at < len(page):
        found = MARKUP.search(page, at)
        end = found.start() if found else len(page)
        out.append(REFERENCE.sub(shown_ampersand, page[at:end]))
        if found is None:
            break
        out.append(found.group())
        at = found.end()
        name = (found.group(1) or "").lower()
        if name in RAW_TEXT or name in ESCAPABLE_RAW_TEXT:
            closing = (re.compile(rf"</{name}[\t\n\f />]", re.IGNORECASE).search(page, at)
                       if name != "plaintext" else None)
            end = closing.start() if closing else len(page)
            text = page[at:end]
            out.append(text.replace("&", "&amp;") if name in RAW_TEXT
                       else REFERENCE.sub(shown_ampersand, text))
            at = end
    return "".join(out)


@dataclass(frozen=True)
class Heading:
    title: str
    page: int  # 0-based, in the laid-out document
    y: float


def outline(doc: pymupdf.Document) -> list[Heading]:
    """The outline's entries, each where it points, in document order."""
    found: list[Heading] = []
    if not doc.get_toc():  # PyMuPDF hands an empty outline out as an item that fails on use
        return found
    stack = [doc.outline] if doc.outline is not None else []
    while stack:
        item = stack.pop()
        while item is not None:
            where = doc.resolve_link(item.uri) if item.uri else None
            if item.title and where and where[0] >= 0:
                found.append(Heading(item.title, int(where[0]), float(where[2])))
            if item.down is not None:
                stack.append(item.down)
            item = item.next
    # Sorted by place, stable: entries pointing at the same place keep the outline's order.
    return sorted(found, key=lambda h: (h.page, h.y))


def same_words(a: str, b: str) -> bool:
    return WORDS.sub(" ", a).strip().casefold() == WORDS.sub(" ", b).strip().casefold()


def blocks(doc: pymupdf.Document, name: str, on_progress: OnProgress) -> Iterator[Block]:
    headings = outline(doc)
    total = doc.page_count
    started = Progress(Stage.READING, 0, total, unit="pages")
    for index in range(total):
        try:
            found = doc.load_page(index).get_text("blocks")
        except MUPDF_ERRORS as error:
            raise damaged(name, index + 1) from error
        texts = [(y0, normalise(text)) for _, y0, _, _, text, _, kind in found if kind == 0]
        starts: dict[int, list[str]] = {}  # block index: the headings that begin there
        at = 0
        while headings and headings[0].page == index:
            heading = headings.pop(0)
            at = heading_block(texts, heading, at)
            starts.setdefault(at, []).append(heading.title)
        for number, (_, text) in enumerate(texts):
            titles = starts.get(number, [])
            for title in titles[:-1]:
                yield Block("", title)  # several entries for one place: an empty section each
            if titles and same_words(text, titles[-1]):
                yield Block(text, titles[-1])
            else:
                if titles:
                    yield Block("", titles[-1])  # the outline's name for what follows
                yield Block(text)
        for title in starts.get(len(texts), []):
            yield Block("", title)
        on_progress(replace(started, done=index + 1))
    for heading in headings:  # pointing past the last text: nothing under them
        yield Block("", heading.title)


def heading_block(texts: list[tuple[float, str]], heading: Heading, at: int) -> int:
    """Which block (from `at` on) a heading begins at: the first one at its place or below,
    or, a little further down, one that says the heading's words. An outline target sits a
    line or so above its heading (24-27 pt in DOCX, HTML and FB2 laid out by MuPDF 1.28), so a
    paragraph ending just above the heading can start below the target."""
    first = next((i for i in range(at, len(texts)) if texts[i][0] >= heading.y - HEADING_SLACK),
                 len(texts))
    for i in range(first, min(first + LOOKAHEAD_BLOCKS, len(texts))):
        if texts[i][0] > heading.y + LOOKAHEAD_PT:
            break
        if same_words(texts[i][1], heading.title):
            return i
    return first


def open_document(path: Path, filetype: str) -> pymupdf.Document:
    """A DOCX as docx.py makes it ready (Strict OOXML, tables as rows); the rest as they are."""
    from glm1m.documents.docx import docx_for_mupdf

    ready = docx_for_mupdf(path) if filetype == "docx" else None
    if ready is None:
        return pymupdf.open(path, filetype=filetype)
    return pymupdf.open(stream=ready, filetype=filetype)


def read_reflowing(path: Path, filetype: str, name: str, on_progress: OnProgress = ignore,
                   max_pages: int | None = None) -> DocumentText:
    """The document in sections. Raises DocumentError for a file MuPDF cannot open as
    `filetype`, a protected one, or one without text; LimitReached, before its text is read, for
    one laid out to more than `max_pages` A4 pages (None: any length)."""
    from glm1m.encoding import html_as_utf8  # MuPDF reads HTML as UTF-8, whatever it declares

    pymupdf.mupdf.fz_set_user_css(KEEP_LONG_LINES)
    try:
        page = html_as_utf8(path, name, DocumentError).decode("utf-8") if filetype == "html" else ""
        doc = (pymupdf.open(stream=decoded_once(page).encode("utf-8"), filetype=filetype)
               if filetype == "html" else open_document(path, filetype))
    except MUPDF_ERRORS as error:
        raise DocumentError(key="doc_cannot_open", name=name, kind=filetype.upper()) from error
    with doc:
        if doc.needs_pass:
            raise DocumentError(key="doc_drm", name=name)
        try:
            doc.layout(width=LAYOUT_WIDTH, height=LAYOUT_HEIGHT)
            check_laid_out(doc.page_count, name, filetype, max_pages)  # limits.py: before the text
            text = document(name, blocks(doc, name, on_progress))
        except MUPDF_ERRORS as error:
            raise damaged(name) from error
    if not text.pages:
        raise DocumentError(key="doc_images_only" if holds_images(path) else "doc_no_content", name=name)
    return text


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".emf", ".wmf", ".svg",
                  ".webp", ".jxr", ".jp2")


def holds_images(path: Path) -> bool:
    """Whether a document without text holds pictures (which OCR could read once the document
    is a PDF): an image part in a DOCX or EPUB (not the preview Word saves in docProps/), an
    <img> in HTML, a <binary> in FB2. Without one, advice to export it for OCR sends the user
    nowhere (python-docx's empty test files)."""
    import zipfile

    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return any(name.lower().endswith(IMAGE_SUFFIXES) and not name.startswith("docProps/")
                           for name in archive.namelist())  # docProps/thumbnail.jpeg: Word's preview
        with path.open("rb") as file:
            head = file.read(64 * 1024 * 1024).lower()
    except (OSError, zipfile.BadZipFile):
        return True  # cannot tell: keep the advice that covers pictures
    return b"<img" in head or b"<binary" in head or b"<image" in head
