"""PDFs made by the tests (PyMuPDF writes them), so no binary files live in the repo."""

from __future__ import annotations

from pathlib import Path

import pymupdf


def make_pdf(path: Path, pages: list[str], chinese: bool = False) -> Path:
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(page.rect + (36, 36, -36, -36), text, fontsize=7,
                            fontname="china-s" if chinese else "helv")
    doc.save(path)
    doc.close()
    return path


def words_page(number: int, words: int) -> str:
    """A page of plain English words that mentions its own number."""
    body = " ".join(f"clause{number}x{i}" if i % 50 == 0 else "contract terms apply" for i in range(words // 3))
    return f"This is page {number}. {body}"
