"""How the page names and counts a chat's documents in English and Chinese (document_words.py),
and the passages beside an answer about several: each names its document."""

from __future__ import annotations

from glm1m.chainlit_app.document_words import budget_line, held_words, set_words, strategy_words
from glm1m.chainlit_app.i18n import EN, ZH, count_of
from glm1m.chainlit_app.passages import passages
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import DocumentSet
from glm1m.progress import Progress, Stage

REPORT = DocumentText("report.pdf", tuple(Page(n, f"page {n} of the report") for n in (1, 2, 3)), 3)
NOTES = DocumentText("notes.md", (Page(1, "Notes.", Kind.SECTION, "Notes"),), 1)
SET = DocumentSet((REPORT, NOTES))


def budget(documents: DocumentSet) -> Budget:
    text = documents.text()
    return Budget(pages=len(text.pages), tokens=301_227, chars=1000, max_model_len=819_200,
                  threshold=400_000, unit=text.kind.unit)


def test_several_documents_are_named_by_letter_and_counted_by_what_they_hold() -> None:
    assert set_words(EN, SET.documents) == "A (report.pdf) and B (notes.md)" == SET.name
    assert set_words(ZH, SET.documents) == "A（report.pdf）和 B（notes.md）"
    three = SET.with_document(REPORT).documents
    assert set_words(ZH, three) == "A（report.pdf）、B（notes.md）和 C（report.pdf）"
    assert budget_line(EN, budget(SET), SET.documents) == (
        "2 documents, 3 pages and 1 section, 301,227 tokens — 36.8% of the served 819,200-token context.")
    assert budget_line(ZH, budget(SET), SET.documents) == (
        "2 份文档，3 页和 1 节，301,227 个词元——占所部署 819,200 词元上下文的 36.8%。")
    alone = DocumentSet((REPORT,))
    assert held_words(EN, budget(alone), alone.documents) == "3 pages"
    assert held_words(ZH, budget(alone), alone.documents) == "3 页"


def test_a_sets_unit_reads_in_both_languages_where_it_is_counted() -> None:
    """A set's budget and progress count "locations" (Kind.SET.unit): never an English word on a
    Chinese page."""
    unit = budget(SET).unit
    assert unit == "locations"
    assert count_of(EN, 4, unit) == "4 locations" and count_of(EN, 1, unit) == "1 location"
    assert count_of(ZH, 4, unit) == "4 处"
    counting = Progress(Stage.COUNTING, 2, 4, unit=unit)
    assert counting.line(ZH) == "统计词元：2 / 4 处" and counting.line(EN) == "counting tokens: 2 of 4 locations"


def test_passages_beside_an_answer_about_several_documents_name_their_document() -> None:
    (a_name, a_text), (b_name, b_text) = passages("Costs [A p. 2]; see [B § 1].", SET.text(), SET)
    assert (a_name, b_name) == ("A p. 2", "B § 1")  # as the answer cites them: Chainlit links them
    assert a_text.startswith("**A · report.pdf · p. 2**\n\npage 2 of the report")
    assert b_text.startswith("**B · notes.md · § 1 · Notes**\n\nNotes.")
    alone = passages("See [p. 3].", REPORT, DocumentSet((REPORT,)))
    assert alone == [("p. 3", "page 3 of the report")]


def test_a_lookup_is_named_by_what_was_asked_and_found_in_the_pages_language() -> None:
    from glm1m.documents.lookup import FIND, READ, Lookup

    found = Lookup(FIND, "licence", "…", ("B § 2", "A p. 2"))
    assert found.words(EN) == "Find: licence → found B § 2, A p. 2"
    assert found.words(ZH) == "查找：licence → 找到 B § 2、A p. 2"
    assert Lookup(READ, "p. 9", "There is no p. 9", ()).words(EN) == "Read: p. 9 → nothing found"
    assert Lookup(READ, "p. 9", "There is no p. 9", ()).words(ZH) == "阅读：p. 9 → 未找到"
    assert strategy_words(ZH, Strategy.LOOK_UP) == "查找阅读"
