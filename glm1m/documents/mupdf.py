"""What MuPDF gives back, as every reader that calls it takes it: the exceptions it raises, and its
text normalised. The paged reader (pdf.py), its OCR workers (ocr.py), the reflowing reader
(reflow.py) and the PDF translator's blocks all catch the same errors and clean text alike, so
neither lives in one of them (ocr.py and pdf.py once imported each other for these two)."""

from __future__ import annotations

import re

import pymupdf

TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)  # ASCII only: U+3000 may be deliberate
MANY_BLANK_LINES = re.compile(r"\n{4,}")  # 4 newlines = 3 blank lines
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # all but tab and line feed (MuPDF ends lines so)
# What MuPDF raises: FileDataError (a RuntimeError) for unparseable bytes, plain RuntimeError
# ("Invalid number of pages") and ValueError from other broken structures, and since PyMuPDF
# 1.24 its own FzError* classes, which are not RuntimeErrors ("cycle in page tree": FzErrorFormat).
MUPDF_ERRORS: tuple[type[Exception], ...] = (
    RuntimeError, ValueError, getattr(getattr(pymupdf, "mupdf", None), "FzErrorBase", RuntimeError))


def normalise(text: str) -> str:
    """Control characters out (a font whose Unicode map a damaged file lost gives its glyph
    numbers as U+0000-U+001F: pdf.js's issue9418.pdf came out as NULs and ^B ^C ...), trailing
    spaces off each line, runs of 3+ blank lines cut to 2; nothing else touched."""
    text = TRAILING_SPACE.sub("", CONTROL.sub("", text))
    return MANY_BLANK_LINES.sub("\n\n\n", text).strip("\n")
