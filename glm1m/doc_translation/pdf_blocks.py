"""A PDF's text blocks, page by page, each with its place and how its text looked: what
pdf_layout.py translates and puts back. A page without a text layer (a scan, or a text layer that
is a font's glyph numbers) is read with Tesseract first, through PyMuPDF's OCR text page, so its
blocks have places too; documents/ocr.py's options and checks are the ones summarize uses.

What is not a block that can be put back is counted, to be said: text that is not horizontal
(rotated or vertical lines), pages MuPDF cannot read, annotations and form fields that hold text.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pymupdf

from glm1m.documents.garble import is_garbled
from glm1m.documents.limits import check_ocr_pages
from glm1m.documents.mupdf import MUPDF_ERRORS
from glm1m.documents.ocr import CJK, CJK_GAP, OcrMode, OcrOptions, tessdata_dir
from glm1m.documents.pdf import PdfLimits, check_document, check_file, damaged, shows_something
from glm1m.errors import DocumentError

BOLD, ITALIC, SERIF, MONO = 16, 2, 4, 8  # MuPDF's span flags
SERIF_NAMES = re.compile(r"times|serif|roman|georgia|garamond|minion|cambria|charis|song|ming", re.I)
SANS_NAMES = re.compile(r"sans|sanl|arial|helvetica|verdana|calibri|segoe|gothic|hei", re.I)
MONO_NAMES = re.compile(r"mono|courier|consol|code", re.I)
HYPHENATED = re.compile(r"[A-Za-z]-$")
CJK_END = re.compile(f"[{CJK}]$")
CJK_START = re.compile(f"^[{CJK}]")
# Only text, no image data: the images stay on the page as they are and are never read. Ligatures
# spelled out: the model reads "fi", not U+FB01 (TeX's PDFs set them; so does MuPDF's HTML layout).
TEXT_FLAGS = pymupdf.TEXTFLAGS_DICT & ~pymupdf.TEXT_PRESERVE_IMAGES & ~pymupdf.TEXT_PRESERVE_LIGATURES


@dataclass(frozen=True)
class Look:
    """How a block's text looked: its most used size, colour and face."""
    size: float
    color: int
    bold: bool
    italic: bool
    family: str  # "Times", "Helvetica" or "Courier": MuPDF's HTML layout sets them in its Nimbus
    # fonts, which are metric-compatible with them (CSS's "serif" would be Charis SIL)


@dataclass(frozen=True)
class Block:
    page: int  # 0-based
    rect: tuple[float, float, float, float]
    text: str  # its lines joined into one run of text
    look: Look
    mixed: bool  # its spans did not all look the same (bold or another face inside it)
    scanned: bool  # its text shows in an image (OCR'd here, or an invisible text layer): the
    # image's pixels under it are painted over when it is replaced


@dataclass
class PdfBlocks:
    pages: int
    blocks: list[Block] = field(default_factory=list)
    scanned: list[int] = field(default_factory=list)  # 0-based pages read by OCR
    unscanned: int = 0  # scanned pages kept as they are: OCR is off
    over_scans: set[int] = field(default_factory=set)  # pages whose blocks are set over a scan
    turned: int = 0  # blocks of text that is not horizontal, kept as they are
    unreadable: list[int] = field(default_factory=list)  # 1-based pages MuPDF could not read
    annotated: int = 0  # annotations and form fields that hold text, kept as they are


def read_blocks(path: Path, ocr: OcrOptions) -> PdfBlocks:
    """Every page's horizontal text blocks in reading order (MuPDF's), scanned pages OCR'd
    unless `ocr.mode` is NEVER (ALWAYS reads as AUTO: a text layer is the text to replace)."""
    check_file(path, path.name, PdfLimits())
    try:
        doc = pymupdf.open(path, filetype="pdf")
    except MUPDF_ERRORS as error:
        raise damaged(path.name) from error
    with doc:
        check_document(doc, path, path.name, PdfLimits())
        found = PdfBlocks(doc.page_count)
        for index in range(doc.page_count):
            try:
                page = doc.load_page(index)
                text = page.get_text()
                found.annotated += sum(1 for a in page.annots() if a.info.get("content", "").strip())
                found.annotated += sum(1 for w in page.widgets() if str(w.field_value or "").strip())
            except MUPDF_ERRORS:
                found.unreadable.append(index + 1)
                continue
            if text.strip() and not is_garbled(text):
                add_blocks(found, index, page.get_text("dict", flags=TEXT_FLAGS), scanned=False)
            elif shows_something(doc, index):
                found.scanned.append(index)
        if found.scanned and ocr.mode is OcrMode.NEVER:
            found.unscanned, found.scanned = len(found.scanned), []
        elif found.scanned:
            ocr_blocks(doc, found, ocr, path.name)
    return found


def opening_text(path: Path, chars: int) -> list[str]:
    """The text layer of the first pages, about `chars` characters of it, nothing OCR'd: enough
    to tell which language the document is in (a scan says nothing, and the default stays)."""
    check_file(path, path.name, PdfLimits())
    texts: list[str] = []
    try:
        with pymupdf.open(path, filetype="pdf") as doc:
            for page in doc:
                texts.append(page.get_text())
                if sum(map(len, texts)) >= chars:
                    break
    except MUPDF_ERRORS as error:
        raise damaged(path.name) from error
    return texts


def ocr_blocks(doc: pymupdf.Document, found: PdfBlocks, ocr: OcrOptions, name: str) -> None:
    """The scanned pages' blocks, from Tesseract's words as MuPDF places them. In this process,
    one page after another: a translation's time goes to the model, not to OCR (ocr.py's
    workers serve the reader, which has no places to keep)."""
    check_ocr_pages(len(found.scanned), name, ocr.max_pages)
    folder = str(tessdata_dir(ocr))
    for index in found.scanned:
        page = doc.load_page(index)
        try:
            textpage = page.get_textpage_ocr(language=ocr.languages, dpi=ocr.dpi, full=True,
                                             tessdata=folder)
        except MUPDF_ERRORS as error:
            raise DocumentError(key="ocr_page_failed", page=index + 1, name=name, error=str(error)) from error
        add_blocks(found, index, page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage), scanned=True)


def add_blocks(found: PdfBlocks, index: int, page: dict, scanned: bool) -> None:
    for block in page["blocks"]:
        lines = [line for line in block.get("lines", ()) if "".join(s["text"] for s in line["spans"]).strip()]
        if not lines:
            continue
        if any(abs(line["dir"][1]) > 0.01 or line["dir"][0] < 0 for line in lines):
            found.turned += 1
            continue
        texts = [line_text(line, scanned) for line in lines]
        spans = [s for line in lines for s in line["spans"] if s["text"].strip()]
        look = look_of(spans)
        # A scan with its own OCR layer: the text is invisible (render mode 3) and shows in the
        # image under it, which is painted over as on a page Tesseract read here.
        hidden = all(s.get("alpha", 255) == 0 for s in spans)
        if scanned or hidden:
            found.over_scans.add(index)
        found.blocks.append(Block(index, tuple(block["bbox"]), joined(texts),
                                  replace(look, color=0) if hidden else look,
                                  len({face(s) for s in spans}) > 1, scanned or hidden))


def line_text(line: dict, scanned: bool) -> str:
    text = "".join(span["text"] for span in line["spans"])
    # Tesseract's words come as spans set apart by runs of spaces, and chi_sim spaces out CJK.
    return CJK_GAP.sub("", " ".join(text.split())) if scanned else text.strip()


def joined(lines: list[str]) -> str:
    """A block's lines as one text: a word broken by a hyphen at a line's end made whole, no
    space between two CJK characters, else one space."""
    out = lines[0]
    for line in lines[1:]:
        if HYPHENATED.search(out) and line[:1].islower():
            out = out[:-1] + line
        elif CJK_END.search(out) and CJK_START.search(line):
            out += line
        else:
            out += " " + line
    return out


def face(span: dict) -> tuple[bool, bool, str]:
    flags = span["flags"]
    return bool(flags & BOLD), bool(flags & ITALIC), family_of(span["font"], flags)


def family_of(font: str, flags: int) -> str:
    if flags & MONO or MONO_NAMES.search(font):
        return "Courier"
    if SANS_NAMES.search(font):
        return "Helvetica"
    return "Times" if flags & SERIF or SERIF_NAMES.search(font) else "Helvetica"


def look_of(spans: list[dict]) -> Look:
    """The look of most of a block's characters."""
    weights: Counter[tuple[float, int, tuple[bool, bool, str]]] = Counter()
    for span in spans:
        weights[(round(span["size"], 1), span["color"], face(span))] += len(span["text"].strip())
    (size, color, (bold, italic, family)), _ = weights.most_common(1)[0]
    return Look(size, color, bold, italic, family)
