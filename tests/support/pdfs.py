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


def write_pdf(path: Path, objects: list[bytes]) -> Path:
    """A PDF written by hand (PyMuPDF refuses to save some on purpose broken ones): objects 1, 2,
    ... as given (1 is the catalog), with a correct xref."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path
