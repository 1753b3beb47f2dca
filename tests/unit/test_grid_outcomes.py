"""A grid cell's four outcomes kept apart (issue 36): answered; "not in the document" (a typed
answer's null, the catalog's sentence in the job's language, neither marked nor failed); marked
(⚠: answered, but not of its type or citing a location the document lacks); failed (no answer).
The progress line and the command's summary count each. The model is scripted."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from glm1m.catalog import EN, ZH, render
from glm1m.documents.pages import Kind
from glm1m.errors import ServerBusy
from glm1m.grid.answers import asked, read_answer
from glm1m.prompts import NOT_ANSWERED
from glm1m.grid.job import run_grid
from glm1m.grid.questions import AnswerType, Question
from glm1m.llm import Message
from glm1m.progress import Progress
from tests.support.scripted_llm import ScriptedLlm, user_text
from tests.unit.test_grid import PARTY, TERM, asking, grid, lease, sheets

pytestmark = pytest.mark.timeout(20)
TYPED = "each as [§ N]}."  # how a typed question's prompt ends (answers.asked)


@pytest.mark.parametrize("kind", list(AnswerType))
def test_every_typed_answer_may_say_the_document_does_not_answer_it(kind: AnswerType) -> None:
    read = read_answer(Question("q", "q", kind), json.dumps({"answer": None, "citations": []}))
    assert read.absent and read.problem is None and read.text == ""


def test_the_prompt_says_how_to_say_the_document_does_not_answer_it() -> None:
    assert "or null if the document does not answer it" in asked(TERM, Kind.SECTION)
    prose = asked(PARTY, Kind.SECTION)
    assert prose.startswith(PARTY.text) and prose.endswith(NOT_ANSWERED)


def null_for_typed(messages: list[Message]) -> str:
    if user_text(messages).endswith(TYPED):
        return json.dumps({"answer": None, "citations": []})
    return "The tenant is Ann [§ 1]."


async def test_a_null_answer_is_not_in_the_document_not_a_marked_cell(tmp_path: Path) -> None:
    summary = await grid(tmp_path, ScriptedLlm(reply=null_for_typed), [lease(tmp_path / "a.md", "Ann")])
    assert summary.complete and summary.rows[0].cells[0].absent
    found = sheets(tmp_path / "grid.xlsx")
    assert found["grid"][1] == ["a.md", "not in the document", "The tenant is Ann [§ 1]."]
    assert found["problems"][1:] == []
    assert summary.said(2).render(EN).startswith(
        "2 cells: 1 answered, 1 not in the document, 0 marked, 0 failed;")


async def test_not_in_the_document_is_said_in_the_jobs_language(tmp_path: Path) -> None:
    zh = replace(asking(tmp_path, ScriptedLlm(reply=null_for_typed)), lang=ZH)
    summary = await run_grid((lease(tmp_path / "a.md", "Ann"),), zh, tmp_path / "grid.csv", 1)
    assert summary.rows[0].cells[0].text == render(ZH, "grid_not_in_document") == "文档中没有相关内容"
    assert "文档中没有相关内容" in (tmp_path / "grid.csv").read_text(encoding="utf-8-sig")


async def test_progress_and_summary_count_answered_marked_and_failed_apart(tmp_path: Path) -> None:
    def replies(messages: list[Message]) -> str:  # a.md: the number as a word (marked)
        if user_text(messages).endswith(TYPED):
            answer = "forty-two" if 'name="a.md"' in user_text(messages) else 42
            return json.dumps({"answer": answer, "citations": ["[§ 2]"]})
        return "The tenant is Ann [§ 1]."

    def busy(text: str) -> Exception | None:  # b.md's prose question: no answer (failed)
        return ServerBusy("busy") if 'name="b.md"' in text and "tenant?" in text else None

    seen: list[Progress] = []
    docs = (lease(tmp_path / "a.md", "Ann"), lease(tmp_path / "b.md", "Bob"))
    summary = await run_grid(docs, asking(tmp_path, ScriptedLlm(reply=replies, fail=busy)),
                             tmp_path / "grid.xlsx", 2, seen.append)
    last = seen[-1]
    assert (last.done, last.total, last.marked, last.failed) == (4, 4, 1, 1)
    assert last.line(EN).startswith("asking: 4 of 4 cells (1 marked) (1 failed)")
    assert "（1 个已标记）（1 个失败）" in last.line(ZH)
    assert summary.said(2).render(EN).startswith(
        "4 cells: 2 answered, 0 not in the document, 1 marked, 1 failed;")
