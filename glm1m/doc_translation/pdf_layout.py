"""A PDF translated in place: every page kept, each text block (pdf_blocks.py) a section, its text
taken out by a redaction (text only: images and drawings under it stay) and its translation set
in the same rectangle with `insert_htmlbox`, in the block's size, colour and face.

A translation longer than its block is shrunk until it fits (scale_low=0), never cut; how many
blocks were set smaller than 70 % is said. CJK needs no font of ours: MuPDF's HTML layout falls
back to its built-in Droid Sans Fallback for glyphs the CSS font lacks (measured: the page then
carries that font and its text extracts as the translation). A block the model failed on keeps
its original text and gets a note annotation (a sticky note) with the mark. Links are put back
after the redactions, which remove every link they touch.

Bilingual (`--bilingual`): the original pages and the translated ones alternate (original 1,
translation 1, original 2, ...), both whole with their links and annotations: BabelDOC's
alternating mode. Side by side would draw each page into a wider one and lose both.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from glm1m.catalog import Said, said
from glm1m.doc_translation.pdf_blocks import Block, PdfBlocks, read_blocks
from glm1m.doc_translation.sections import Section, mark, translation
from glm1m.documents.ocr import OcrOptions
from glm1m.errors import DocumentError
from glm1m.translation.fanout import Result

SHRUNK = 0.7  # a block set smaller than this share of its size is counted, to be said
# PyMuPDF's PDF_REDACT_IMAGE_NONE, _IMAGE_PIXELS and _LINE_ART_NONE, which its type stubs lack:
# images left alone, or only the pixels under the redaction blanked; drawings left alone.
IMAGES_KEPT, IMAGE_PIXELS_BLANKED, DRAWINGS_KEPT = 0, 2, 0
NOTE_SIZE = 12  # the sticky note's icon, in points: it sits left of the block's top corner


@dataclass
class PdfLayout:
    path: Path
    blocks: list[Block]
    bilingual: bool = False
    sections: list[Section] = field(default_factory=list)
    notes: list[Said] = field(default_factory=list)

    def kept(self, section: Section, answer: str) -> bool:
        return True

    def fell_back(self, section: Section, answer: str) -> str:
        return answer

    def write(self, results: Mapping[int, Result], path: Path, lang: str) -> list[Said]:
        by_page: dict[int, list[tuple[Section, Block]]] = {}
        for section, block in zip(self.sections, self.blocks, strict=True):
            by_page.setdefault(block.page, []).append((section, block))
        shrunk = mixed = 0
        with pymupdf.open(self.path, filetype="pdf") as doc:
            for number, on_page in by_page.items():
                page_shrunk, page_mixed = write_page(doc.load_page(number), on_page, results, lang)
                shrunk, mixed = shrunk + page_shrunk, mixed + page_mixed
            if self.bilingual:
                alternate(doc, self.path)
            # insert_htmlbox embeds its whole font with every block (Droid Sans Fallback: ~1.7 MB):
            # a 140 KB, 17-page manual came back as 432 MB. Subsetting keeps the glyphs used and
            # garbage=4 merges the identical copies left: 226 KB.
            doc.subset_fonts()
            doc.save(path, garbage=4, deflate=True)
        notes = [said("doc_tr_pdf_shrunk", count=shrunk, percent=round(SHRUNK * 100))] if shrunk else []
        return notes + ([said("doc_tr_pdf_formatting", count=mixed)] if mixed else [])


def write_page(page: pymupdf.Page, on_page: list[tuple[Section, Block]], results: Mapping[int, Result],
               lang: str) -> tuple[int, int]:
    """One page's blocks replaced or marked; returns how many were shrunk and had mixed looks."""
    done = {s.index: text for s, _ in on_page if (text := translation(results, s.index)) is not None}
    room = widths(page, [b for _, b in on_page])
    take_out(page, [b for s, b in on_page if s.index in done])
    shrunk = mixed = 0
    for section, block in on_page:
        if section.index in done:
            shrunk += set_text(page, block, room[block.rect], done[section.index]) < SHRUNK
            mixed += block.mixed
        else:
            marked(page, block, mark(results.get(section.index), lang))
    return shrunk, mixed


def take_out(page: pymupdf.Page, blocks: list[Block]) -> None:
    """The blocks' text removed; on a scan, their pixels painted white too (the text is in the
    image there). Links are kept aside and put back: a redaction removes those it touches."""
    if not blocks:
        return
    links = [link for link in page.get_links() if link.get("kind") != pymupdf.LINK_NONE]
    scanned = any(b.scanned for b in blocks)
    for block in blocks:
        no_fill: bool = False  # MuPDF's way to say "no fill", which the stubs do not know
        page.add_redact_annot(pymupdf.Rect(block.rect), fill=(1, 1, 1) if block.scanned else no_fill,  # type: ignore[arg-type]
                              cross_out=False)
    page.apply_redactions(images=IMAGE_PIXELS_BLANKED if scanned else IMAGES_KEPT, graphics=DRAWINGS_KEPT)
    kept = {link_key(link) for link in page.get_links()}
    for link in links:
        if link_key(link) not in kept:
            page.insert_link(link)


def link_key(link: dict) -> tuple[object, ...]:
    return link.get("kind"), tuple(link["from"]), link.get("uri"), link.get("page")


def widths(page: pymupdf.Page, blocks: list[Block]) -> dict[tuple[float, float, float, float], float]:
    """How far right each block may be set: to the page's right margin (as wide as its left
    one), else to the right edge of its column (the blocks above and below that overlap it
    sideways), else its own edge; the first that runs into no other block or image. A heading's
    or a one-line paragraph's box ends where its words end, and a longer translation would
    otherwise shrink on a line with room to spare."""
    obstacles = [pymupdf.Rect(b.rect) for b in blocks]
    obstacles += [pymupdf.Rect(image["bbox"]) for image in page.get_image_info()]
    margin = page.rect.width - min(b.rect[0] for b in blocks)
    room = {}
    for block in blocks:
        rect = pymupdf.Rect(block.rect)
        column = max([o.x1 for o in obstacles if o.x0 < rect.x1 and o.x1 > rect.x0] + [rect.x1])
        room[block.rect] = next((right for right in (margin, column) if right > rect.x1 and not any(
            pymupdf.Rect(rect.x0, rect.y0, right, rect.y1).intersects(o) for o in obstacles if o != rect)),
            rect.x1)
    return room


def set_text(page: pymupdf.Page, block: Block, right: float, text: str) -> float:
    """The translation in the block's rectangle; returns the scale it was set at (1: its size)."""
    look = block.look
    css = (f"* {{margin: 0; padding: 0; font-size: {look.size:.1f}pt; line-height: 1.15;"
           f" color: #{look.color:06x}; font-family: {look.family};"
           f" font-weight: {'bold' if look.bold else 'normal'};"
           f" font-style: {'italic' if look.italic else 'normal'}}}")
    body = "<br>".join(html.escape(line) for line in text.strip().split("\n"))
    # A little room below: a block's box ends at its last line's descent, and MuPDF's line
    # height is larger than the PDF's, so a text of the same length would already shrink.
    x0, y0, _, y1 = block.rect
    rect = pymupdf.Rect(x0, y0, right + 1, y1 + look.size * 0.3)
    spare, scale = page.insert_htmlbox(rect, body, css=css, scale_low=0)
    return float(scale) if spare >= 0 else 0.0  # scale_low=0 shrinks until it fits: never < 0


def marked(page: pymupdf.Page, block: Block, why: str) -> None:
    x0, y0 = block.rect[0], block.rect[1]
    note = page.add_text_annot(pymupdf.Point(max(x0 - NOTE_SIZE, 0), y0), "⚠ " + why)
    note.set_info(title="glm1m")
    note.update()


def alternate(doc: pymupdf.Document, original: Path) -> None:
    """`doc` (translated) made original page, translated page, in turn."""
    count = doc.page_count
    with pymupdf.open(original, filetype="pdf") as source:
        doc.insert_pdf(source)  # links between its own pages are kept by insert_pdf
    doc.select([n for page in range(count) for n in (count + page, page)])


def read_pdf_layout(path: Path, bilingual: bool = False, ocr: OcrOptions | None = None) -> PdfLayout:
    found: PdfBlocks = read_blocks(path, ocr or OcrOptions())
    layout = PdfLayout(path, found.blocks, bilingual)
    layout.sections = [Section(n, block.text, block.text) for n, block in enumerate(found.blocks)]
    if found.over_scans:
        layout.notes.append(said("doc_tr_pdf_scanned", count=len(found.over_scans)))
    if found.unscanned:
        layout.notes.append(said("doc_tr_pdf_unscanned", count=found.unscanned))
    if found.turned:
        layout.notes.append(said("doc_tr_pdf_turned", count=found.turned))
    if found.annotated:
        layout.notes.append(said("doc_tr_pdf_annotations", count=found.annotated))
    if found.unreadable:
        layout.notes.append(said("doc_tr_pdf_unreadable", count=len(found.unreadable),
                                 pages=", ".join(map(str, found.unreadable))))
    if not layout.sections:
        raise DocumentError(key="doc_tr_nothing", name=path.name)
    return layout
