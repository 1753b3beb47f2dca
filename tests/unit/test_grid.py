"""`glm1m grid`'s core (glm1m/grid/): every question about every document through the shelf and
the whole-document prompt, typed answers held to a JSON schema, citations checked, a checkpoint
per document, one unreadable document marked without stopping the others. The model is scripted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from openpyxl import load_workbook

from glm1m.catalog import EN
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import Shelf
from glm1m.grid.cells import Asking, params_of
from glm1m.grid.checkpoint import checkpoint_path
from glm1m.grid.job import Summary, run_grid
from glm1m.grid.questions import AnswerType, Question
from glm1m.llm import Message
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm, user_text

pytestmark = pytest.mark.timeout(20)
TERM = Question("How long is the notice period, in days?", "notice", AnswerType.NUMBER)
PARTY = Question("Who is the tenant?", "tenant")


def lease(path: Path, tenant: str) -> Path:
    path.write_text(f"# Parties\n\nThe tenant is {tenant}.\n\n# Notice\n\nNotice is 42 days.\n",
                    encoding="utf-8")
    return path


def document_of(messages: list[Message]) -> str:
    """The file a whole-document prompt is about: `<document name="a.md">`."""
    return user_text(messages).split('name="', 1)[1].split('"', 1)[0]


def answers(messages: list[Message]) -> str:
    """A typed question gets its JSON, the prose question its sentence, each with a citation."""
    if user_text(messages).endswith("each as [§ N]}."):
        return json.dumps({"answer": 42, "citations": ["[§ 2]"]})
    return f"The tenant of {document_of(messages)} [§ 1]."


def asking(tmp_path: Path, llm: ScriptedLlm, *questions: Question) -> Asking:
    settings = Settings(data_dir=tmp_path / "data", base_url="http://gpu-1:8000/v1",
                        whole_document_threshold=100_000, max_tokens=64)
    return Asking(questions or (TERM, PARTY), llm, settings, Shelf.of(tmp_path / "data", 100),
                  ReadOptions(), params_of(settings), EN, asyncio.Lock())


async def grid(tmp_path: Path, llm: ScriptedLlm, documents: list[Path], *questions: Question,
               output: str = "grid.xlsx") -> Summary:
    return await run_grid(tuple(documents), asking(tmp_path, llm, *questions), tmp_path / output, 2)


def sheets(path: Path) -> dict[str, list[list[str | None]]]:
    book = load_workbook(path)
    return {sheet.title: [list(row) for row in sheet.iter_rows(values_only=True)] for sheet in book}


async def test_every_cell_is_asked_document_first_and_the_table_has_its_passages(tmp_path: Path) -> None:
    docs = [lease(tmp_path / "a.md", "Ann"), lease(tmp_path / "b.md", "Bob")]
    llm = ScriptedLlm(reply=answers)
    summary = await grid(tmp_path, llm, docs)
    assert summary.complete and len(llm.calls) == 4
    # A document's two prompts share everything before the question: the second is a cache hit.
    for name in ("a.md", "b.md"):
        first, second = (c.text for c in llm.calls if document_of(c.messages) == name)
        document = first[:first.index("Question: ")]
        assert second.startswith(document) and "Notice is 42 days." in document
    found = sheets(tmp_path / "grid.xlsx")
    assert list(found) == ["grid", "passages", "problems"]
    assert found["grid"] == [["document", "notice", "tenant"],
                             ["a.md", "42 [§ 2]", "The tenant of a.md [§ 1]."],
                             ["b.md", "42 [§ 2]", "The tenant of b.md [§ 1]."]]
    cited = ["a.md", "notice", "§ 2 · Notice · lines 5–7", "# Notice\n\nNotice is 42 days."]
    assert cited in found["passages"]
    assert found["problems"] == [["document", "question", "problem"]]
    assert not checkpoint_path(tmp_path / "grid.xlsx").exists()  # all done: nothing to resume


async def test_a_typed_question_carries_its_schema_and_a_prose_one_none(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=answers)
    await grid(tmp_path, llm, [lease(tmp_path / "a.md", "Ann")])
    typed, prose = llm.calls
    sent = typed.params.body()
    assert sent is not None
    schema = sent["structured_outputs"]["json"]
    assert schema["properties"]["answer"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}
    assert schema["required"] == ["answer", "citations"]
    # Read whole, the document is asked again with each question: kept in the host KV tier.
    assert "kv_transfer_params" not in sent
    assert "structured_outputs" not in (prose.params.body() or {})


async def test_an_answer_not_of_its_type_or_citing_a_missing_location_is_marked(tmp_path: Path) -> None:
    def wrong(messages: list[Message]) -> str:
        if user_text(messages).endswith("each as [§ N]}."):
            return json.dumps({"answer": "forty-two", "citations": ["[§ 2]"]})
        return "Ann, see [§ 9]."
    summary = await grid(tmp_path, ScriptedLlm(reply=wrong), [lease(tmp_path / "a.md", "Ann")])
    assert not summary.complete
    found = sheets(tmp_path / "grid.xlsx")
    assert found["grid"][1][1].startswith("⚠ ") and found["grid"][1][2] == "⚠ Ann, see [§ 9]."
    assert found["problems"][1:] == [
        ["a.md", "notice", "the answer is not a number"],
        ["a.md", "tenant", "cites a location the document does not have: [§ 9]"]]
    # Marked, but answered: asking again at temperature 0 would give the same; the job is done.
    assert not checkpoint_path(tmp_path / "grid.xlsx").exists()


async def test_an_unreadable_document_is_a_marked_row_and_stops_nothing(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 not really")
    docs = [lease(tmp_path / "a.md", "Ann"), broken, lease(tmp_path / "c.md", "Cy")]
    summary = await grid(tmp_path, ScriptedLlm(reply=answers), docs, output="grid.csv")
    assert [row.problem is None for row in summary.rows] == [True, False, True]
    table = (tmp_path / "grid.csv").read_text(encoding="utf-8-sig").splitlines()
    assert table[2].startswith("broken.pdf,⚠ the document could not be read")
    assert table[3].startswith("c.md,42 [§ 2]")
    problems = (tmp_path / "grid.problems.csv").read_text(encoding="utf-8-sig")
    assert "broken.pdf" in problems and (tmp_path / "grid.passages.csv").exists()


async def test_a_stop_mid_document_resumes_without_asking_finished_documents_again(tmp_path: Path) -> None:
    docs = [lease(tmp_path / "a.md", "Ann"), lease(tmp_path / "b.md", "Bob")]
    held = ScriptedLlm(reply=answers, hold=lambda text: 'name="b.md"' in text and "tenant?" in text)
    running = asyncio.create_task(grid(tmp_path, held, docs))
    await held.wait_finished(3)  # a.md's two cells and b.md's first; b.md's second is held
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert not (tmp_path / "grid.xlsx").exists()

    again = ScriptedLlm(reply=answers)
    summary = await grid(tmp_path, again, docs)
    assert summary.complete and summary.resumed == 1
    assert {document_of(c.messages) for c in again.calls} == {"b.md"} and len(again.calls) == 2
    assert sheets(tmp_path / "grid.xlsx")["grid"][1] == ["a.md", "42 [§ 2]", "The tenant of a.md [§ 1]."]


async def test_a_failed_request_marks_its_cell_and_the_document_is_asked_again(tmp_path: Path) -> None:
    from glm1m.errors import ServerBusy
    failing = ScriptedLlm(reply=answers,
                          fail=lambda text: ServerBusy("busy") if "tenant?" in text else None)
    summary = await grid(tmp_path, failing, [lease(tmp_path / "a.md", "Ann")])
    assert not summary.complete and summary.rows[0].cells[1].failed
    again = ScriptedLlm(reply=answers)
    assert (await grid(tmp_path, again, [lease(tmp_path / "a.md", "Ann")])).complete
    assert len(again.calls) == 2  # not kept as finished: both its questions asked again
