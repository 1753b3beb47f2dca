"""A PDF translated in place (glm1m/doc_translation/pdf_layout.py) with the scripted model: the
pages stay, each text block's text is replaced in its own rectangle (read back with
page.get_text), a translation longer than its block is shrunk and every word of it is still on
the page, a CJK translation extracts as itself (real glyphs), links and images stay, a failed
block keeps its text and gets a note, a rerun asks only it, --bilingual alternates the pages,
a scanned page is read by OCR first, and what cannot be kept is said."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pymupdf
import pytest

from glm1m.doc_translation.job import DocJob, run_document
from glm1m.doc_translation.prompt import GLOSSARY_ASK
from glm1m.documents.ocr import OcrOptions
from glm1m.errors import DocumentError, ServerBusy
from glm1m.translation.job import checkpoint_path
from tests.support.documents import make_scanned_pdf
from tests.support.scripted_llm import ScriptedLlm, user_text

ASK = GLOSSARY_ASK.split(",")[0]
BLOCKS = [["Getting started", "Install the tool and run it with the help option."],
          ["Second page heading", "A paragraph on the second page, with a link."]]


def make_pdf(path: Path) -> Path:
    """Two pages: a bold heading and a paragraph each, an image on the first, a link on the second."""
    doc = pymupdf.open()
    for heading, paragraph in BLOCKS:
        page = doc.new_page()
        page.insert_text((72, 80), heading, fontsize=18, fontname="helvetica-bold")
        page.insert_textbox(pymupdf.Rect(72, 120, 520, 200), paragraph, fontsize=11, fontname="times-roman")
    picture = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 8, 8), 0)
    picture.clear_with(128)
    doc[0].insert_image(pymupdf.Rect(72, 300, 144, 372), pixmap=picture)
    doc[1].insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(72, 120, 300, 135),
                        "uri": "https://example.org/"})
    doc.save(path)
    return path


def reply_with(translate):
    def reply(messages: list) -> str:
        text = user_text(messages)
        return "" if text.startswith(ASK) else translate(text)
    return reply


def run(path: Path, llm: ScriptedLlm, out: Path, notes: list | None = None, **job: object):
    said = notes if notes is not None else []
    return asyncio.run(run_document(path, DocJob("French", **job), llm, out, on_note=said.append))


def texts(path: Path) -> list[list[str]]:
    with pymupdf.open(path) as doc:
        return [[" ".join(" ".join(s["text"] for line in b["lines"] for s in line["spans"]).split())
                 for b in page.get_text("dict")["blocks"] if b["type"] == 0] for page in doc]


def test_every_block_is_replaced_in_place_and_pages_images_links_stay(tmp_path: Path) -> None:
    src, out = make_pdf(tmp_path / "guide.pdf"), tmp_path / "guide.fr.pdf"
    summary = run(src, ScriptedLlm(reply=reply_with(str.upper)), out)
    assert summary.total == 4 and summary.complete and summary.notes == ()
    with pymupdf.open(src) as before, pymupdf.open(out) as after:
        assert after.page_count == before.page_count == 2
        for page, blocks in zip(after, BLOCKS, strict=True):
            found = page.get_text()
            for text in blocks:
                assert " ".join(text.upper().split()) in " ".join(found.split())
                assert text not in found
        assert len(after[0].get_images()) == 1
        assert [link["uri"] for link in after[1].get_links()] == ["https://example.org/"]
        first = next(b for b in after[0].get_text("dict")["blocks"] if b["type"] == 0)
        heading = first["lines"][0]["spans"][0]
        assert heading["flags"] & 16 and round(heading["size"]) == 18  # bold, its size


def test_a_longer_translation_is_shrunk_never_cut(tmp_path: Path) -> None:
    src, out = make_pdf(tmp_path / "guide.pdf"), tmp_path / "guide.de.pdf"
    longer = lambda text: f"{text} " + " ".join(f"word{n}" for n in range(40))  # noqa: E731
    summary = run(src, ScriptedLlm(reply=reply_with(longer)), out)
    assert [n.key for n in summary.notes] == ["doc_tr_pdf_shrunk"]
    with pymupdf.open(out) as doc:
        for page in doc:
            words = {w[4] for w in page.get_text("words")}
            assert {f"word{n}" for n in range(40)} <= words
            for word in page.get_text("words"):  # all of it inside the page
                assert page.rect.contains(pymupdf.Rect(word[:4]))


def test_a_chinese_translation_is_set_in_real_glyphs(tmp_path: Path) -> None:
    src, out = make_pdf(tmp_path / "guide.pdf"), tmp_path / "guide.zh.pdf"
    chinese = {"Getting started": "入门", "Second page heading": "第二页标题"}
    translate = lambda text: chinese.get(text, "这是一段译文，" + str(len(text)))  # noqa: E731
    run(src, ScriptedLlm(reply=reply_with(translate)), out)
    pages = texts(out)
    assert pages[0][0] == "入门" and pages[1][0] == "第二页标题"
    assert pages[0][1].startswith("这是一段译文，")
    with pymupdf.open(out) as doc:
        # A subset font's name carries a tag ("XBRYBV+Droid Sans Fallback Regular").
        assert "Droid Sans Fallback Regular" in {font[3].split("+")[-1] for font in doc[0].get_fonts()}
        assert "\ufffd" not in doc[0].get_text()
    # The CJK font embedded once and subset, not whole with every block (~1.7 MB each).
    assert out.stat().st_size < 300_000, out.stat().st_size


def test_a_failed_block_keeps_its_text_with_a_note_and_a_rerun_asks_only_it(tmp_path: Path) -> None:
    src, out = make_pdf(tmp_path / "guide.pdf"), tmp_path / "guide.fr.pdf"
    broken = ScriptedLlm(reply=reply_with(str.upper), fail=lambda text: ServerBusy(
        key="server_busy", status=503) if text == "Second page heading" else None)
    first = run(src, broken, out, retries=0)
    assert (first.translated, first.failed) == (3, 1)
    with pymupdf.open(out) as doc:
        assert "Second page heading" in doc[1].get_text()
        notes = [a.info["content"] for a in doc[1].annots()]
        assert len(notes) == 1 and notes[0].startswith("⚠ glm1m: not translated:")
    again = ScriptedLlm(reply=reply_with(str.upper))
    second = run(src, again, out)
    assert [c.text for c in again.calls] == ["Second page heading"] and second.complete
    with pymupdf.open(out) as doc:
        assert "SECOND PAGE HEADING" in doc[1].get_text() and list(doc[1].annots()) == []
    assert not checkpoint_path(out).exists()


def test_bilingual_alternates_original_and_translated_pages(tmp_path: Path) -> None:
    src, out = make_pdf(tmp_path / "guide.pdf"), tmp_path / "guide.fr.pdf"
    run(src, ScriptedLlm(reply=reply_with(str.upper)), out, bilingual=True)
    pages = texts(out)
    assert len(pages) == 4
    assert pages[0] == BLOCKS[0] and pages[1] == [t.upper() for t in BLOCKS[0]]
    assert pages[2] == BLOCKS[1] and pages[3] == [t.upper() for t in BLOCKS[1]]


def test_bilingual_is_refused_for_other_formats(tmp_path: Path) -> None:
    src = tmp_path / "a.md"
    src.write_text("Hello.\n", encoding="utf-8")
    with pytest.raises(DocumentError) as raised:
        run(src, ScriptedLlm(), tmp_path / "b.md", bilingual=True)
    assert raised.value.key == "doc_tr_bilingual_pdf"


def test_a_scanned_page_is_read_by_ocr_and_its_translation_set_over_the_scan(tmp_path: Path) -> None:
    src = make_scanned_pdf(tmp_path / "scan.pdf", ["Scanned words on paper.", "Typed page."],
                           text_pages=(1,), dpi=150)
    out, notes = tmp_path / "scan.fr.pdf", []
    summary = run(src, ScriptedLlm(reply=reply_with(lambda t: "TRANSLATED " + t.upper())), out, notes,
                  ocr=OcrOptions(languages="eng"))
    assert summary.complete and summary.total == 2
    assert [(n.key, n.fields) for n in notes if n.key.startswith("doc_tr_pdf")] == [
        ("doc_tr_pdf_scanned", {"count": 1})]
    pages = texts(out)
    assert pages[0] == ["TRANSLATED SCANNED WORDS ON PAPER."] and pages[1] == ["TRANSLATED TYPED PAGE."]


def test_what_cannot_be_kept_is_said(tmp_path: Path) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 80), "Level text.", fontsize=12)
    page.insert_text((300, 400), "Turned text", fontsize=12, rotate=90)
    writer = pymupdf.TextWriter(page.rect)
    writer.append((72, 200), "Plain then ", font=pymupdf.Font("helv"), fontsize=12)
    writer.append(writer.last_point, "bold", font=pymupdf.Font("hebo"), fontsize=12)
    writer.write_text(page)
    page.add_text_annot((400, 80), "A reviewer's note")
    doc.save(tmp_path / "mixed.pdf")
    notes: list = []
    summary = run(tmp_path / "mixed.pdf", ScriptedLlm(reply=reply_with(str.upper)), tmp_path / "o.pdf", notes)
    assert summary.total == 2
    assert {n.key for n in notes} >= {"doc_tr_pdf_turned", "doc_tr_pdf_annotations"}
    assert [n.key for n in summary.notes] == ["doc_tr_pdf_formatting"]
    with pymupdf.open(tmp_path / "o.pdf") as out:
        assert "Turned text" in out[0].get_text() and "PLAIN THEN BOLD" in out[0].get_text()
