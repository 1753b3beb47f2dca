"""Sections the way pages are: markers, citations, prompts, chunks, budget, the store, the label
shown beside the answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glm1m.documents.answer import OpenDocument, whole_prompt
from glm1m.documents.budget import Budget, Strategy, budget_said, measure
from glm1m.documents.mapreduce import MapReduce, combine_prompt, note_prompt
from glm1m.documents.pages import DocumentText, Kind, Page, cited_pages, page_marks
from glm1m.documents.split import split
from glm1m.documents.store import load, save
from tests.support.scripted_llm import ScriptedLlm


def guide() -> DocumentText:
    sections = (Page(1, "Installation\n\nRun it.", Kind.SECTION, "Installation", "¶ 1"),
                Page(2, "Configuration\n\nEdit it. " * 40, Kind.SECTION, "Configuration", "¶ 1–2"),
                Page(3, "More.", Kind.SECTION, "Configuration", "¶ 3"))
    return DocumentText("guide.docx", sections, 3)


@pytest.mark.parametrize("answer, cited", [
    ("Install first [§ 1], then edit [§2].", [1, 2]),
    ("See [§ 3, § 1] and [§§ 1–2].", [3, 1, 2]),
    ("As written [§ 2 Configuration] and [§ 3: 7.1 Hash functions 9].", [2, 3]),  # heading numbers ignored
    ("Ranges backwards [§ 3-2], missing [§ 9], pages mean nothing here [p. 1].", [2, 3]),
])
def test_section_citations_are_read_back(answer: str, cited: list[int]) -> None:
    assert cited_pages(answer, 3, Kind.SECTION) == cited
    assert [p.number for p in guide().cited(answer)] == cited


def test_page_citations_are_unchanged_and_ignore_sections() -> None:
    assert cited_pages("[p. 2] [p.3] [§ 1] [p. 5-4]", 10) == [2, 3, 4, 5]


def test_markers_labels_and_locations_follow_the_kind() -> None:
    doc = guide()
    assert doc.marked_text().startswith("[§ 1]\nInstallation\n\nRun it.\n\n[§ 2]\nConfiguration")
    assert [n for _, n in page_marks(doc)] == [1, 2, 3]
    assert [(p.label, p.location) for p in doc.pages][2] == ("§ 3", "§ 3 · Configuration · ¶ 3")
    assert (Page(7, "x").label, Page(7, "x").location, Page(7, "x").marked()) == ("p. 7", "p. 7", "[p. 7]\nx")


def test_prompts_tell_the_model_to_cite_sections_for_a_reflowing_document() -> None:
    system = whole_prompt(guide(), "What to install?")[0]["content"]
    assert "[§ N]" in system and "section markers" in system and "[p. N]" not in system
    assert "[p. N]" in whole_prompt(DocumentText("a.pdf", (Page(1, "x"),), 1), "q")[0]["content"]
    chunks = split(guide(), 200)
    assert {c.kind for c in chunks} == {Kind.SECTION} and chunks[0].pages == "§§ 1–2"
    assert chunks[-1].pages.endswith("3") and all(c.pages.startswith("§") for c in chunks)
    note = note_prompt("guide.docx", chunks[0], "q")
    assert "[§ N]" in note[0]["content"] and "section citations" in note[1]["content"]
    final = combine_prompt("guide.docx", [], "q", final=True, kind=Kind.SECTION)
    assert "Keep the section citations [§ N]" in final[1]["content"]


async def test_the_budget_counts_sections() -> None:
    budget = await measure(guide(), ScriptedLlm(), threshold=10_000)
    assert budget.unit == "sections" and budget_said(budget).render("en").startswith("3 sections, ")


def test_a_document_in_sections_survives_the_store(tmp_path: Path) -> None:
    doc = OpenDocument(guide(), Budget(3, 120, 500, 8192, 100, "sections"), Strategy.WHOLE,
                       MapReduce(1000, 2, 64))
    save(doc, tmp_path / "document.json")
    assert load(tmp_path / "document.json") == doc


def test_a_document_saved_before_sections_existed_still_opens(tmp_path: Path) -> None:
    """FORMAT 1, as glm1m wrote it before this change: pages as [number, text], no budget unit."""
    (tmp_path / "document.json").write_text(json.dumps({
        "format": 1, "name": "old.pdf", "page_count": 2, "pages": [[1, "first"], [2, ""]],
        "budget": {"pages": 2, "tokens": 9, "chars": 30, "max_model_len": 8192, "threshold": 100},
        "strategy": "whole", "plan": {"chunk_tokens": 1000, "concurrency": 2, "note_tokens": 64}}))
    doc = load(tmp_path / "document.json")
    assert doc is not None and doc.text.pages == (Page(1, "first"), Page(2, ""))
    assert doc.budget.unit == "pages" and doc.text.kind is Kind.PAGE


def test_a_store_of_an_unknown_format_gets_the_sentence(tmp_path: Path) -> None:
    (tmp_path / "document.json").write_text(json.dumps({"format": 99}))
    with pytest.raises(Exception, match="could not be reopened"):
        load(tmp_path / "document.json")


def test_the_page_shows_a_cited_section_with_where_to_find_it() -> None:
    """cited_passages names each side element page.label and fills it with passage(page)."""
    from glm1m.chainlit_app.passages import passage

    shown = guide().cited("Edit it [§ 2].")
    assert [p.label for p in shown] == ["§ 2"]  # the name the answer links, as it cites it
    assert passage(shown[0]).startswith("**§ 2 · Configuration · ¶ 1–2**\n\nConfiguration")
    assert passage(Page(1, "one ![x](http://a/b.png)")) == "one [x](http://a/b.png)"
