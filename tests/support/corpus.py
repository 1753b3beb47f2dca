"""Bad input, generated on the spot (no binary blobs in the repo): every kind of PDF, CSV and file
name a user has sent or will send, with what glm1m must do with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pymupdf

from tests.support.pdfs import make_pdf


@dataclass(frozen=True)
class Case:
    what: str  # for the report
    name: str  # the file name the browser sends
    data: bytes
    mime: str
    expect: str  # "error": one sentence, no file; "file": a translated CSV comes back
    says: tuple[str, ...] = ()  # "error": the sentence holds one of these
    texts: tuple[str, ...] = ()  # "file": the text column that comes back, row by row
    output: str = ""  # "file", where it differs from NAME.translated.csv: the output's name

    @property
    def kind(self) -> str:
        return "pdf" if self.mime == "application/pdf" else "csv"


def pdf_bytes(tmp: Path, pages: list[str]) -> bytes:
    return make_pdf(tmp / "x.pdf", pages).read_bytes()


def encrypted(tmp: Path) -> bytes:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret terms")
    doc.save(tmp / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    return (tmp / "locked.pdf").read_bytes()


def image_only(tmp: Path) -> bytes:
    doc = pymupdf.open()
    page = doc.new_page()
    # A blank picture: a new Pixmap's pixels are whatever memory held, and OCR reads such noise as
    # words (seen: "ANAS a AB Baas ..."), so this one is cleared to white.
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 50, 50), 0)
    pixmap.clear_with(255)
    page.insert_image(pymupdf.Rect(72, 72, 272, 272), pixmap=pixmap)
    doc.save(tmp / "scan.pdf")
    return (tmp / "scan.pdf").read_bytes()


# A well-formed PDF whose page tree holds no page (PyMuPDF refuses to write one).
ZERO_PAGES = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
              b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
              b"trailer<</Root 1 0 R>>\n%%EOF\n")


def csv_of(rows: list[str], header: str = "id,text", encoding: str = "utf-8") -> bytes:
    return "\n".join([header, *rows, ""]).encode(encoding)


def pdf_cases(tmp: Path) -> list[Case]:
    whole = pdf_bytes(tmp, [f"Page {i} of the contract. " * 40 for i in range(1, 9)])
    return [
        Case("password-protected PDF", "locked.pdf", encrypted(tmp), "application/pdf", "error",
             ("is password-protected",)),
        Case("corrupt PDF (header, then garbage)", "corrupt.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 40,
             "application/pdf", "error", ("is damaged or incomplete", "is not a PDF")),
        # Cut in half, its first pages are read and the rest named as lost (test_documents_real_pdf);
        # cut to an eighth, nothing readable is left.
        Case("truncated PDF (first eighth)", "cut.pdf", whole[: len(whole) // 8], "application/pdf", "error",
             ("is damaged or incomplete",)),
        Case("PDF with zero pages", "empty.pdf", ZERO_PAGES, "application/pdf", "error", ("has no pages",)),
        Case("image-only PDF whose image holds no text", "scan.pdf", image_only(tmp), "application/pdf", "error",
             ("not even with OCR",)),
        Case("PNG renamed .pdf", "photo.pdf", b"\x89PNG\r\n\x1a\n" + bytes(200), "application/pdf", "error",
             ("is not a PDF",)),
        Case("empty file named .pdf", "nothing.pdf", b"", "application/pdf", "error", ("is empty",)),
    ]


def csv_cases() -> list[Case]:
    return [
        Case("empty CSV", "empty.csv", b"", "text/csv", "error", ("is empty",)),
        Case("header only", "header.csv", b"id,text\n", "text/csv", "error", ("has a header but no rows",)),
        Case("GBK-encoded Chinese", "gbk.csv", csv_of(["1,本合同自签字之日起生效", "2,甲方应按时付款"], encoding="gbk"),
             "text/csv", "file", texts=("本合同自签字之日起生效", "甲方应按时付款")),
        Case("UTF-8 with BOM", "bom.csv", b"\xef\xbb\xbf" + csv_of(["1,hello", "2,world"]), "text/csv", "file",
             texts=("hello", "world")),
        Case("quoted newlines", "quoted.csv", csv_of(['1,"first line\nsecond line"', '2,"a ""quoted"" word"']),
             "text/csv", "file", texts=("first line\nsecond line", 'a "quoted" word')),
        Case("rows shorter than the header", "short.csv", csv_of(["1,one", "2", "3,three"]), "text/csv", "file",
             texts=("one", "", "three")),
        Case("rows longer than the header", "ragged.csv", csv_of(["1,one", "2,two,extra,cells"]), "text/csv", "error",
             ("row 3 has 4 fields but its header (row 1) has 2",)),
        # Written back with a leading quote, so a spreadsheet shows the text instead of running it.
        Case("formula cells", "formulas.csv", csv_of(["1,=HYPERLINK(\"http://x\")", "2,+cmd", "3,-5"]),
             "text/csv", "file", texts=("'=HYPERLINK(\"http://x\")", "'+cmd", "-5")),
        Case("a 10 MB single cell", "huge-cell.csv", csv_of(["1," + "长" * 3_500_000]), "text/csv", "file",
             texts=("长" * 3_500_000,)),
        Case("undecodable bytes", "binary.csv", b"id,text\n1," + bytes(range(128, 256)) * 50, "text/csv", "error",
             ("neither UTF-8 nor GBK",)),
    ]


def name_cases() -> list[Case]:
    ok = csv_of(["1,hello", "2,你好"])
    texts = ("hello", "你好")
    return [
        Case("name with ../", "../../outside.csv", ok, "text/csv", "file", texts=texts,
             output="outside.translated.csv"),
        Case("name with a NUL byte", "nul\x00name.csv", ok, "text/csv", "file", texts=texts,
             output="nul%00name.translated.csv"),  # the HTTP client sends the NUL percent-encoded
        Case("300-character name", "n" * 300 + ".csv", ok, "text/csv", "file", texts=texts,
             output="n" * 150 + ".translated.csv"),
        Case("non-ASCII name", "合同 2026（终版）.csv", ok, "text/csv", "file", texts=texts,
             output="合同 2026（终版）.translated.csv"),
    ]
