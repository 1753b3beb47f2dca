"""Several documents asked together, against a scripted model client: each in its labelled block in
the order attached, a document added later keeping the earlier ones as the prompt's prefix, the
model told the letters, citations parsed back to their files, and the set's budget line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glm1m.documents.answer import OpenDocument, answer, open_document, open_set, whole_prompt
from glm1m.documents.budget import budget_said
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import Cited, DocumentSet
from glm1m.llm import ChatParams
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.3, max_tokens=512)


def paged(name: str, pages: int, word: str) -> DocumentText:
    texts = [f"{word} says fact {p}." for p in range(1, pages + 1)]
    return DocumentText(name, tuple(Page(n, t) for n, t in enumerate(texts, start=1)), pages)


def sectioned(name: str, sections: int, word: str) -> DocumentText:
    found = tuple(Page(n, f"{word} section {n}.", Kind.SECTION, f"Heading {n}", f"¶ {n}–{n + 2}")
                  for n in range(1, sections + 1))
    return DocumentText(name, found, sections)


CONTRACT = paged("contract.pdf", 3, "The contract")
NOTES = sectioned("notes.md", 2, "The notes")
REPORT = paged("report.pdf", 2, "The report")


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(data_dir=tmp_path, whole_document_threshold=100_000,
                                  map_chunk_tokens=256, map_concurrency=3, map_note_tokens=64)
    return Settings(**(values | overrides))


async def streamed(doc: OpenDocument, question: str, llm: ScriptedLlm) -> str:
    return "".join([piece async for piece in answer(doc, question, llm, PARAMS)])


def test_each_document_is_a_labelled_block_in_the_order_attached() -> None:
    text = DocumentSet((CONTRACT, NOTES, REPORT)).text()
    marked = text.marked_text()
    assert text.name == "A (contract.pdf), B (notes.md) and C (report.pdf)"
    heads = ['<document label="A" name="contract.pdf">', '<document label="B" name="notes.md">',
             '<document label="C" name="report.pdf">']
    at = [marked.index(head) for head in heads]
    assert at == sorted(at) and marked.startswith(heads[0])
    # Every location's marker carries its document's letter, and sits in its document's block.
    for mark, words in [("[A p. 3]", "The contract says fact 3."), ("[B § 2]", "The notes section 2."),
                        ("[C p. 1]", "The report says fact 1.")]:
        assert f"{mark}\n{words}" in marked
    assert at[0] < marked.index("[A p. 3]") < at[1] < marked.index("[B § 2]") < at[2]
    assert "[p. " not in marked and "[§ " not in marked
    assert marked.count("</document>") == 3 and marked.endswith("</document>")


async def test_a_document_added_later_keeps_the_earlier_ones_as_the_prompts_prefix(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "Both agree [A p. 1] [B § 2].")
    two = DocumentSet((CONTRACT, NOTES))
    three = two.with_document(REPORT)
    assert three.labels == ("A", "B", "C") and three.documents[:2] == two.documents
    for documents in (two, three):
        doc = await open_set(documents, llm, settings(tmp_path), PARAMS.max_tokens)
        assert await streamed(doc, "Do they agree?", llm) == "Both agree [A p. 1] [B § 2]."
    first, second = (call.messages for call in llm.calls)
    assert first[0] == second[0]  # the system prompt names no document: it stays when one is added
    before = first[-1]["content"].removesuffix("Question: Do they agree?")
    assert second[-1]["content"].startswith(before)
    assert second[-1]["content"].endswith("Question: Do they agree?")
    assert '<document label="C" name="report.pdf">' in second[-1]["content"].removeprefix(before)


def test_the_model_is_told_the_letters_and_how_to_cite_them() -> None:
    system, user = whole_prompt(DocumentSet((CONTRACT, NOTES)).text(), "What is due?")
    told = system["content"]
    assert "A, B, C" in told and "[B p. 12]" in told and "[C § 3]" in told and "letter included" in told
    assert user["content"].endswith("</document>\n\nQuestion: What is due?")


async def test_one_document_is_asked_exactly_as_before(tmp_path: Path) -> None:
    alone = DocumentSet((CONTRACT,))
    assert alone.text() == CONTRACT and alone.name == "contract.pdf"
    llm = ScriptedLlm()
    as_set = await open_set(alone, llm, settings(tmp_path), PARAMS.max_tokens)
    as_document = await open_document(CONTRACT, llm, settings(tmp_path), PARAMS.max_tokens)
    assert as_set == as_document
    assert whole_prompt(as_set.text, "Q?") == whole_prompt(CONTRACT, "Q?")
    assert "[p. 1]\nThe contract says fact 1." in whole_prompt(CONTRACT, "Q?")[1]["content"]
    assert [c.page.label for c in alone.cited("See [p. 2].")] == ["p. 2"]


def test_citations_name_their_document_and_location() -> None:
    documents = DocumentSet((CONTRACT, NOTES, REPORT))
    said = ("The fee is due [B § 2], as agreed [A p. 3]; see also [C, p. 1-2], [A p.3] again, "
            "[B §§ 1–2], a page B lacks [B p. 1], one C lacks [C p. 9], and an unlabelled [p. 1].")
    cited = documents.cited(said)
    assert [(c.label, c.name, c.page.number) for c in cited] == [
        ("B", "notes.md", 2), ("A", "contract.pdf", 3), ("C", "report.pdf", 1), ("C", "report.pdf", 2),
        ("B", "notes.md", 1)]
    assert cited[0] == Cited("B", "notes.md", NOTES.pages[1])  # the location as its document has it
    assert [c.line for c in cited[:3]] == ["B · notes.md · § 2 · Heading 2 · ¶ 2–4",
                                           "A · contract.pdf · p. 3", "C · report.pdf · p. 1"]
    # The set's text cites its labelled locations too: distinct names beside the answer.
    assert [p.label for p in documents.text().cited(said)][:3] == ["B § 2", "A p. 3", "C p. 1"]


async def test_the_budget_line_counts_documents_pages_sections_and_tokens(tmp_path: Path) -> None:
    documents = DocumentSet((CONTRACT, NOTES, REPORT))
    llm = ScriptedLlm(context=8192)
    doc = await open_set(documents, llm, settings(tmp_path), PARAMS.max_tokens)
    tokens = doc.budget.tokens
    # Counted by the server's tokenizer (here a character in four), headers and letters included.
    assert tokens == len("".join(f"{page.marked()}\n\n" for page in doc.text.pages)) // 4 + 1
    assert budget_said(doc.budget, documents.documents).render("en") == (
        f"3 documents, 5 pages and 2 sections, {tokens:,} tokens — {tokens / 8192:.1%} of the "
        f"served 8,192-token context.")
    one_each = (paged("a.pdf", 1, "A"), sectioned("b.md", 1, "B"))
    assert budget_said(doc.budget, one_each).render("en").startswith("2 documents, 1 page and 1 section, ")


def test_a_documents_content_id_follows_its_text_not_its_name_or_letter() -> None:
    """What the page's buttons name a document by (shelf_panel.py): a letter moves when another
    document leaves the chat; the content id does not."""

    a = DocumentText("a.pdf", (Page(1, "one", Kind.PAGE), Page(2, "two", Kind.PAGE)), 2)
    renamed = DocumentText("other name.pdf", a.pages, 2)
    moved = DocumentText("a.pdf", (Page(1, "onetwo", Kind.PAGE), Page(2, "", Kind.PAGE)), 2)
    assert a.content_id == renamed.content_id
    assert a.content_id != moved.content_id  # the same characters, split otherwise
    both = DocumentSet((moved, a))
    assert [d.content_id for d in both.without("A").documents] == [a.content_id]
