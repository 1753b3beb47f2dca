"""Text layers a reader cannot trust (issue 33): a font without a Unicode map gives its glyph
numbers, which in the Macintosh glyph order are the characters' codes minus 29."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from glm1m.documents.garble import is_garbled
from glm1m.documents.ocr import OcrMode, OcrOptions
from glm1m.documents.pdf import extract
from glm1m.errors import DocumentError

PROSE = ("Metal shaft bushing for the main drive. Replace it every two years or when the noise of "
         "the bearing grows; order part 4711 from the maker.")
GERMAN = ("Die Metallbuchse der Hauptwelle wird alle zwei Jahre ersetzt, oder wenn das Lager lauter "
          "wird; bestellen Sie Teil 4711 beim Hersteller.")


def glyph_numbers(text: str, space: str = "\x03") -> str:
    """What MuPDF gives for `text` set in such a font (py-pdf's unreadablemetadata.pdf:
    "0HWDO6KDIW%XVKLQJ" for "MetalShaftBushing", after a "7")."""
    return "".join(space if c == " " else chr(ord(c) - 29) for c in text)


@pytest.mark.parametrize("text", [glyph_numbers(PROSE), glyph_numbers(PROSE, space=" "),
                                  glyph_numbers(GERMAN), "\ufffd" * 60])
def test_glyph_numbers_and_unmapped_glyphs_are_garble(text: str) -> None:
    assert glyph_numbers("MetalShaftBushing") == "0HWDO6KDIW%XVKLQJ"
    assert is_garbled(text)


@pytest.mark.parametrize("text", [
    PROSE, GERMAN,
    "WARNING: DO NOT OPEN THE COVER WHILE THE MACHINE IS RUNNING. DISCONNECT THE POWER FIRST.",
    "2024 1,234.56 7,890.12 3,456.78 9,012.34 5,678.90 1,111.11 2,222.22 3,333.33 4,444.44",
    "def main(argv: list[str]) -> int:\n    for x in range(10):\n        print(x, file=sys.stderr)",
    "金属轴套用于主传动装置。每两年或轴承噪音变大时更换；向制造商订购零件4711。" * 2,
    "0HWDO",  # too little to tell
])
def test_text_that_is_not_prose_is_not_taken_for_garble(text: str) -> None:
    assert not is_garbled(text)


def scan_with_garbled_layer(path: Path, pages: int = 2) -> Path:
    """Pages that show PROSE (drawn as a picture, as a scan) under an invisible text layer of
    its glyph numbers: what a viewer shows is right, what get_text gives is garble."""
    with pymupdf.open() as doc:
        for _ in range(pages):
            with pymupdf.open() as source:
                drawn = source.new_page()
                drawn.insert_textbox(pymupdf.Rect(72, 72, 520, 400), PROSE, fontsize=14)
                picture = drawn.get_pixmap(dpi=150).tobytes("png")
            page = doc.new_page()
            page.insert_image(page.rect, stream=picture)
            page.insert_textbox(pymupdf.Rect(72, 72, 520, 400), glyph_numbers(PROSE, space=" "),
                                fontsize=14, render_mode=3)
        doc.save(path)
    return path


def test_a_garbled_text_layer_is_refused_without_ocr(tmp_path: Path) -> None:
    path = scan_with_garbled_layer(tmp_path / "bushing.pdf")
    with pymupdf.open(path) as doc:  # MuPDF alone hands the garble over
        assert "0HWDO VKDIW" in doc[0].get_text()
    with pytest.raises(DocumentError) as refused:
        extract(path, ocr=OcrOptions(OcrMode.NEVER))
    assert refused.value.key == "doc_garbled"
    message = str(refused.value)
    assert message.startswith("bushing.pdf: 2 pages (1–2) use a font without a map") and "OCR" in message
    assert "0HWDO" in message  # the example, never the document's garble as its text


def test_a_garbled_page_goes_to_ocr_like_a_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[list[int]] = []

    def ocr_pages(path: Path, filetype: str, pages: list[int], *args: object) -> dict[int, str]:
        asked.append(list(pages))
        return {index: f"OCR of page {index + 1}" for index in pages}

    monkeypatch.setattr("glm1m.documents.pdf.ocr_pages", ocr_pages)
    text = extract(scan_with_garbled_layer(tmp_path / "bushing.pdf"), ocr=OcrOptions(OcrMode.AUTO))
    assert asked == [[0, 1]]
    assert [page.text for page in text.pages] == ["OCR of page 1", "OCR of page 2"]
