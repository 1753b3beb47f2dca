"""The default target is never the language the text is already in (translation/written_in.py)."""

from __future__ import annotations

from glm1m.translation.written_in import CHINESE, ENGLISH, script_of, target_for


def test_chinese_text_is_chinese_even_with_latin_names_and_numbers_in_it() -> None:
    assert script_of(["第1条：本合同自 2024 年 1 月 1 日起生效", "甲方 ACME Ltd. 应在 30 日内付款"]) == CHINESE


def test_english_text_is_english_and_a_few_accents_do_not_change_that() -> None:
    assert script_of(["The valve opens at 7 bar.", "Café staff check it daily."]) == ENGLISH


def test_other_scripts_mixes_and_numbers_are_neither() -> None:
    assert script_of(["Привет, мир", "Здравствуйте"]) is None
    assert script_of(["12", "3.5", "—"]) is None
    assert script_of([]) is None


def test_the_default_target_turns_to_the_other_language_only_when_the_text_is_in_it() -> None:
    assert target_for(CHINESE, ["第1行", "第2行"]) == ENGLISH  # a Chinese table on an English page
    assert target_for(ENGLISH, ["Row one", "Row two"]) == CHINESE  # an English table on a Chinese page
    assert target_for(CHINESE, ["Row one"]) == CHINESE
    assert target_for(ENGLISH, ["第1行"]) == ENGLISH
    assert target_for("日本語", ["第1行"]) == "日本語"  # a chosen third language is the user's


def test_a_documents_opening_text_tells_its_language_and_a_scan_tells_nothing(tmp_path) -> None:
    import pymupdf

    from glm1m.doc_translation.formats import opening_text

    text_pdf, scan_pdf, markdown = tmp_path / "合同.pdf", tmp_path / "scan.pdf", tmp_path / "notes.md"
    with pymupdf.open() as doc:
        page = doc.new_page()
        page.insert_text((72, 72), "第一条 甲方应在三十日内付款。", fontname="china-s")
        doc.save(text_pdf)
    with pymupdf.open() as doc:
        page = doc.new_page()
        page.draw_rect(pymupdf.Rect(72, 72, 300, 200), fill=(0, 0, 0))  # a picture, no text layer
        doc.save(scan_pdf)
    markdown.write_text("# Payment\n\nThe buyer pays within thirty days.\n", encoding="utf-8")
    assert target_for(CHINESE, opening_text(text_pdf)) == ENGLISH
    assert script_of(opening_text(scan_pdf)) is None  # no OCR for a guess: the default stays
    assert target_for(ENGLISH, opening_text(markdown)) == CHINESE
