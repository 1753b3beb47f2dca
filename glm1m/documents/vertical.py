"""A PDF page's text with vertical writing (Japanese, Chinese set top to bottom) joined into lines.

MuPDF 1.28 hands each character of a vertical line over as a line of its own (writing mode 1), so
a vertical Japanese page came out one character per line: 880 of 881 lines on a real file. Here
the characters of each column are joined top to bottom, and the columns of a run put right to
left, as they are read. Pages without a vertical font (its CMap's name ends in "-V", the PDF way
of saying vertical) keep MuPDF's plain text exactly, at no extra cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pymupdf

CJK_CHAR = re.compile("[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")  # kana, Han, Hangul
MIN_STACKED = 10  # lines of one CJK character, at least
STACKED_SHARE = 0.5  # of the page's lines


@dataclass
class Column:
    x0: float
    x1: float
    top: float
    bottom: float
    chars: list[str] = field(default_factory=list)

    def takes(self, x0: float, y0: float, x1: float, y1: float) -> bool:
        """Whether a character at this box goes on down this column: it overlaps the column's
        width by half of the narrower one, and starts about where the column stops."""
        overlap = min(x1, self.x1) - max(x0, self.x0)
        height = max(y1 - y0, 1.0)
        return (overlap > 0.5 * min(x1 - x0, self.x1 - self.x0)
                and -0.5 * height <= y0 - self.bottom <= 1.5 * height)


def has_vertical_font(page: pymupdf.Page) -> bool:
    try:
        return any(str(font[5]).endswith("-V") for font in page.get_fonts(full=True))
    except (RuntimeError, ValueError):
        return False


def stacked_characters(page: pymupdf.Page) -> bool:
    """Whether most of the page's lines are one CJK character each: vertical writing set in a
    horizontal font (Identity-H), each character placed below the last. pdfminer's kampo.pdf
    read one character a line, 2,582 of its 2,602 lines, with no "-V" font to say so."""
    lines = [line for line in page.get_text().split("\n") if line.strip()]
    single = sum(len(line.strip()) == 1 and bool(CJK_CHAR.match(line.strip())) for line in lines)
    return single >= MIN_STACKED and single >= STACKED_SHARE * len(lines)


def page_text(page: pymupdf.Page) -> str:
    """The page's plain text (as get_text() gives it), vertical lines joined in reading order."""
    vertical_font = has_vertical_font(page)
    if not vertical_font and not stacked_characters(page):
        return page.get_text()
    out: list[str] = []
    run: list[tuple[tuple[float, float, float, float], str]] = []  # vertical characters in a row
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", ()):
            text = "".join(span["text"] for span in line["spans"])
            if line.get("wmode") == 1 if vertical_font else len(text.strip()) == 1:
                run.append((tuple(line["bbox"]), text))
                continue
            out.extend(columns(run))
            run = []
            out.append(text)
    out.extend(columns(run))
    return "".join(line + "\n" for line in out)


def columns(run: list[tuple[tuple[float, float, float, float], str]]) -> list[str]:
    """Vertical characters (box, text), in MuPDF's order, as one line per column: columns that
    stand side by side (their heights overlap) right to left, such bands top to bottom."""
    found: list[Column] = []
    for (x0, y0, x1, y1), text in run:
        if found and found[-1].takes(x0, y0, x1, y1):
            column = found[-1]
            column.bottom = max(column.bottom, y1)
        else:
            column = Column(x0, x1, y0, y1)
            found.append(column)
        column.chars.append(text)
    bands: list[list[Column]] = []
    for column in sorted(found, key=lambda c: c.top):
        band = bands[-1] if bands else None
        if band is not None and column.top < min(c.bottom for c in band):
            band.append(column)
        else:
            bands.append([column])
    return ["".join(c.chars).strip() for band in bands
            for c in sorted(band, key=lambda c: -(c.x0 + c.x1))]
