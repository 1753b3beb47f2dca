"""`glm1m extract` on the kinds of real files issue 23 found, with the real Tesseract: a damaged
PDF read as far as it goes, Tesseract kept off the terminal, a picture not read as words."""

from __future__ import annotations

import random
from pathlib import Path

import pymupdf
import pytest

from glm1m.documents.formats import ReadOptions, read_document
from glm1m.documents.ocr import OcrMode, OcrOptions
from glm1m.errors import DocumentError
from tests.integration.test_extract import PROGRESS, TRACE_MARKS, extract
from tests.integration.test_ocr import FIRST
from tests.support.documents import make_scanned_pdf
from tests.unit.test_documents_real_pdf import looping_pdf

TESSDATA = Path("/usr/share/tesseract-ocr/5/tessdata")


def test_a_page_tree_that_loops_prints_the_pages_and_names_the_lost_one(tmp_path: Path) -> None:
    run = extract(looping_pdf(tmp_path / "loop.pdf", ["first page", "second page"]))
    assert run.returncode == 0 and run.stdout == "[p. 1]\nfirst page\n\n[p. 2]\nsecond page\n\n[p. 3]\n\n"
    said = [line for line in run.stderr.splitlines() if not PROGRESS.match(line)]
    assert said == ["glm1m: Page 3 of loop.pdf could not be read (the file is damaged or cut short "
                    "there): the text lacks it. Download or export it again for the whole text."]


def test_tesseract_s_own_complaints_stay_off_the_terminal(tmp_path: Path, monkeypatch) -> None:
    broken = tmp_path / "tessdata"
    broken.mkdir()
    (broken / "eng.traineddata").write_bytes((TESSDATA / "eng.traineddata").read_bytes()[:100_000])
    monkeypatch.setenv("GLM1M_OCR_TESSDATA", str(broken))
    monkeypatch.setenv("GLM1M_OCR_LANGUAGES", "eng")
    run = extract(make_scanned_pdf(tmp_path / "scan.pdf", [FIRST]))
    assert run.returncode == 2 and not run.stdout
    said = [line for line in run.stderr.splitlines() if not line.startswith("glm1m: reading")]
    assert len(said) == 1  # no "Error opening data file" lines, no traceback
    assert said[0].startswith("glm1m: Tesseract could not start to read scan.pdf: its language data "
                               f"(eng in {broken}) cannot be loaded (Error opening data file")
    assert "tesseract-ocr-eng" in said[0] and not any(mark in run.stderr for mark in TRACE_MARKS)


def engraving(path: Path, text_page: str | None = None) -> Path:
    """A page that is a picture: hatching strokes and rings, as an engraving is drawn, scanned
    (an image, no text layer); then, when given, a scanned page of text."""
    drawn = pymupdf.open()
    page = drawn.new_page()
    rng = random.Random(1)
    for _ in range(400):
        x, y = rng.uniform(50, 550), rng.uniform(50, 800)
        end = (x + rng.uniform(-30, 30), y + rng.uniform(-8, 8))
        page.draw_line((x, y), end, width=rng.uniform(0.3, 1.5))
    for _ in range(60):
        page.draw_circle((rng.uniform(100, 500), rng.uniform(100, 700)), rng.uniform(2, 20), width=0.6)
    out = pymupdf.open()
    scan = out.new_page()
    scan.insert_image(scan.rect, pixmap=page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY))
    if text_page is not None:
        with pymupdf.open(make_scanned_pdf(path.with_suffix(".text.pdf"), [text_page])) as text:
            out.insert_pdf(text)
    out.save(path)
    return path


def test_a_picture_is_not_read_as_words_and_the_text_beside_it_is(tmp_path: Path) -> None:
    options = ReadOptions(ocr=OcrOptions(OcrMode.AUTO))
    read = read_document(engraving(tmp_path / "plate.pdf", FIRST), options)
    assert read.pages[0].text == ""  # 43 lines of strokes before ("一=~ 四ome OS 、 _ & -一")
    assert "quick brown fox" in read.pages[1].text
    with pytest.raises(DocumentError, match="not even with OCR .*pictures without words"):
        read_document(engraving(tmp_path / "only.pdf"), options)
