"""A document prompt travels as its parts (documents/prompt.py): token ids are had from the parts
whatever the prompt's ending says, and a set's members come from the set, not from its rendered
block headers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from glm1m.documents.answer import document_prompt
from glm1m.documents.lookup import listed, prompt, read
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.prompt import QUESTION, Prompt, members
from glm1m.documents.prompt_ids import KeptIds, prompt_ids
from glm1m.documents.sets import DocumentSet, set_prompt
from glm1m.llm import LlmClient
from tests.support.fake_vllm import FakeVllm, render
from tests.unit.test_lookup import LIMITS, MANUAL, NOTES, SET
from tests.unit.test_prompt_ids import report, settings_in

pytestmark = pytest.mark.timeout(20)


def test_each_builder_returns_the_parts_it_rendered() -> None:
    for built in (document_prompt(MANUAL, "Q?"), set_prompt(SET, "Q?"), prompt(SET, "Q?")):
        assert built.messages[1]["content"] == built.document_part + built.question_part
        assert built.question_part == f"{QUESTION}Q?"
    whole = document_prompt(MANUAL, "Q?")
    assert whole.document_part.endswith("</document>\n\n") and whole.last_line == "</document>\n\n"
    assert whole.members == members(MANUAL) and whole.members[0].label == ""
    assert [(m.label, m.name) for m in set_prompt(SET, "Q?").members] == [("A", "manual.pdf"),
                                                                         ("B", "notes \"v2\".md")]


def test_a_sets_members_come_from_the_set_not_from_its_headers() -> None:
    """Headers rewritten (or gone) leave the names: the set says them, nothing reads them back."""
    headless = replace(SET, pages=tuple(replace(page, head="") for page in SET.pages))
    assert [(m.label, m.name, len(m.pages)) for m in members(headless)] == [
        ("A", "manual.pdf", 3), ("B", "notes \"v2\".md", 2)]
    assert "B notes \"v2\".md" in listed(headless).render("en")
    assert read(headless, "B § 2", LIMITS).found == ("B § 2",)


def test_a_text_that_does_not_know_its_names_says_its_letters() -> None:
    unnamed = DocumentText("set", DocumentSet((MANUAL, NOTES)).text().pages, 5)
    assert [m.name for m in members(unnamed)] == ["A", "B"]
    lone = DocumentText("empty.md", (), 0)
    assert members(lone)[0].pages == (Page(1, "", Kind.PAGE),)


async def test_a_prompt_whose_ending_changes_still_goes_as_ids(tmp_path: Path) -> None:
    """The old prompt_ids sliced "Question: " + question off the rendered message: any other
    ending sent the question as chat. Now the parts come as built."""
    fake = FakeVllm(reply="ok", context=20_000)
    llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
    built = document_prompt(report(), "What is it about?")
    reworded = Prompt(built.system, built.document_part, "Asked: What is it about?\nAnswer briefly.")
    try:
        ids = await prompt_ids(llm, reworded, KeptIds())
    finally:
        await llm.aclose()
    assert ids is not None and ids.messages == reworded.messages
    assert list(ids.ids) == fake.ids(render(reworded.messages, generation=True))
