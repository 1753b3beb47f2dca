"""Text a PDF's text layer gives but a reader cannot trust: a font without a Unicode map.

A subset TrueType font without a ToUnicode map hands MuPDF its glyph numbers, and in the standard
Macintosh glyph order a glyph's number is its character's code minus 29: py-pdf's
unreadablemetadata.pdf came out as "0HWDO6KDIW%XVKLQJ" for "MetalShaftBushing", exit 0. Such a
page is shown right (the glyphs are right) but its text is wrong, so it goes to OCR like a scan,
and without OCR the reader is told, never handed the garble.

The test is the letter statistics: in prose most characters are spaces and the common lower-case
letters; in the shifted text those became control characters, capitals and digits, and moving
every code back by 29 restores them. All-capital text, tables of numbers, code, and any text not
mostly ASCII (Chinese, Cyrillic) are left alone: they are not prose to begin with, and moving them
by 29 does not make them prose.
"""

from __future__ import annotations

GLYPH_ORDER_SHIFT = 29  # Macintosh standard order: glyph 3 is the space, 68 is "a"
COMMON = frozenset(" etaoinshrdlu")  # in English, about 70 % of all letters and spaces
MIN_CHARACTERS = 40  # fewer: too little to tell (a page number, a caption)
PROSE = 0.55  # a share of COMMON at least this: prose (English ~0.7, German, French ~0.65)
NOT_PROSE = 0.3  # at most this before the shift (the shifted sample: 0.0)
UNMAPPED = 0.3  # replacement and private-use characters: the font maps its glyphs to nothing


def common_share(text: str) -> float:
    characters = [c for c in text if c not in "\n\r\t"]
    return sum(c in COMMON for c in characters) / max(len(characters), 1)


def shifted_back(text: str) -> str:
    return "".join(chr(ord(c) + GLYPH_ORDER_SHIFT) if ord(c) < 128 - GLYPH_ORDER_SHIFT else c
                   for c in text if c not in "\n\r\t")


def is_garbled(text: str) -> bool:
    """Whether a page's raw text (control characters still in) is a font's glyph numbers or
    unmapped glyphs rather than its characters."""
    visible = [c for c in text if not c.isspace() or c == " "]
    if len([c for c in visible if c != " "]) < MIN_CHARACTERS:
        return False
    unmapped = sum(c == "\ufffd" or "\ue000" <= c <= "\uf8ff" for c in visible)
    if unmapped >= UNMAPPED * len(visible):
        return True
    if sum(ord(c) < 128 for c in visible) < 0.9 * len(visible):
        return False
    return common_share(text) <= NOT_PROSE and common_share(shifted_back(text)) >= PROSE
