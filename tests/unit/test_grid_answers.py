"""A grid's questions file, each answer type's schema and the reading of a typed answer back into
its cell (glm1m/grid/questions.py, answers.py, citations.py), and `glm1m grid`'s bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import Workbook

from glm1m.cli.main import main
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.errors import GridError
from glm1m.grid.answers import VALUE_SCHEMA, read_answer, schema, structured
from glm1m.grid.citations import missing
from glm1m.grid.questions import AnswerType, Question, read_questions


def typed(kind: AnswerType) -> Question:
    return Question("q", "q", kind)


def reply(answer: object, *citations: str) -> str:
    return json.dumps({"answer": answer, "citations": list(citations)})


def test_each_type_has_its_schema_sent_as_structured_outputs() -> None:
    for kind in AnswerType:
        body = structured(kind)["structured_outputs"]["json"]
        assert body == schema(kind)
        assert body["properties"]["answer"] == {"anyOf": [VALUE_SCHEMA[kind], {"type": "null"}]}
        assert body["properties"]["citations"] == {"type": "array", "items": {"type": "string"}}
    assert VALUE_SCHEMA[AnswerType.YES_NO]["enum"] == ["yes", "no"]
    assert VALUE_SCHEMA[AnswerType.LIST]["type"] == "array"


@pytest.mark.parametrize(("kind", "value"), [
    (AnswerType.TEXT, {"type": "string"}), (AnswerType.NUMBER, {"type": "number"}),
    (AnswerType.DATE, {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"}),
    (AnswerType.YES_NO, {"type": "string", "enum": ["yes", "no"]}),
    (AnswerType.LIST, {"type": "array", "items": {"type": "string"}}),
])
def test_each_types_schema_holds_the_answer_to_its_own_value_or_null(kind: AnswerType,
                                                                      value: dict[str, object]) -> None:
    """Written out, not read from VALUE_SCHEMA: a type whose schema changed (or lost its null,
    "not in the document") fails here."""
    assert schema(kind) == {
        "type": "object", "required": ["answer", "citations"], "additionalProperties": False,
        "properties": {"answer": {"anyOf": [value, {"type": "null"}]},
                       "citations": {"type": "array", "items": {"type": "string"}}}}


@pytest.mark.parametrize(("kind", "answer", "cell"), [
    (AnswerType.NUMBER, 42, "42 [p. 12]"), (AnswerType.NUMBER, 2.5, "2.5 [p. 12]"),
    (AnswerType.DATE, "2024-02-29", "2024-02-29 [p. 12]"), (AnswerType.YES_NO, "Yes", "yes [p. 12]"),
    (AnswerType.LIST, ["Ann", "Bob"], "Ann; Bob [p. 12]"), (AnswerType.TEXT, "42 days", "42 days [p. 12]"),
])
def test_a_typed_answer_is_its_value_and_citations_as_written(kind: AnswerType, answer: object,
                                                               cell: str) -> None:
    read = read_answer(typed(kind), reply(answer, "[p. 12]"))
    assert read.text == cell and read.problem is None


@pytest.mark.parametrize(("kind", "text"), [
    (AnswerType.NUMBER, reply("forty-two")), (AnswerType.NUMBER, reply(True)),
    (AnswerType.DATE, reply("2023-02-29")), (AnswerType.YES_NO, reply("maybe")),
    (AnswerType.LIST, reply("Ann")), (AnswerType.NUMBER, '{"answer": 4'),  # cut short
    (AnswerType.NUMBER, "Between 30 and 60 days [p. 3]."),  # prose without one number
])
def test_an_answer_not_of_its_type_is_marked_and_kept_as_written(kind: AnswerType, text: str) -> None:
    read = read_answer(typed(kind), text)
    assert read.problem is not None and read.text == text


def test_citations_of_locations_the_document_lacks_are_found() -> None:
    pages = DocumentText("a.pdf", tuple(Page(n, f"page {n}") for n in (1, 2, 3)), 3)
    assert missing(pages, "42 days [p. 2], see [p. 2-3]") == []
    assert missing(pages, "42 days [p. 4] and [p. 3-5] and [p. 1]") == ["[p. 4]", "[p. 3-5]"]
    sections = DocumentText("a.md", (Page(1, "x", Kind.SECTION),), 1)
    assert missing(sections, "[§ 1] [§ 2]") == ["[§ 2]"]


def test_a_questions_file_in_csv_or_xlsx(tmp_path: Path) -> None:
    csv = tmp_path / "q.csv"
    csv.write_text("Type,Question,Name\nnumber,How long is notice?,notice\n,Who pays?,\n", encoding="utf-8")
    assert read_questions(csv) == (Question("How long is notice?", "notice", AnswerType.NUMBER),
                                   Question("Who pays?", "Who pays?"))
    book = Workbook()
    book.active.append(["question", "type"])
    book.active.append(["Renewed?", "yes/no"])
    book.save(tmp_path / "q.xlsx")
    assert read_questions(tmp_path / "q.xlsx") == (Question("Renewed?", "Renewed?", AnswerType.YES_NO),)
    csv.write_text("question,type\nHow long?,duration\n", encoding="utf-8")
    with pytest.raises(GridError, match="row 2: the type \"duration\" is none of text, number"):
        read_questions(csv)


def test_bad_input_exits_2_before_anything_is_asked(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n", encoding="utf-8")
    for argv, said in [
        (["grid", str(tmp_path / "a.md"), "--questions", str(tmp_path / "none.csv")],
         "no questions file"),
        (["grid", str(tmp_path / "a.md"), "--question", "Q", "-o", str(tmp_path / "out.json")],
         ".xlsx or .csv"),
        (["grid", str(tmp_path / "missing"), "--question", "Q"], "no file or folder"),
        (["grid", str(tmp_path), "--question", "Q", "--question", "Q"], "Two questions are named"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        assert said in capsys.readouterr().err
