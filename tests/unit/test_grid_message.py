"""The page's grid (issue 36): questions typed in a message, one a line or a pasted table, and how
many documents a stopped job's checkpoint keeps (what the page says before and after a rerun)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glm1m.errors import GridError
from glm1m.grid.cells import Cell, Row
from glm1m.grid.checkpoint import GridCheckpoint, checkpoint_path, kept
from glm1m.grid.questions import AnswerType, Question, from_message


def test_a_message_gives_a_question_a_line_its_list_marks_taken_off() -> None:
    text = ("- What was the revenue?\n\n2) Who signed it?\n3、金额是多少？\n（4）何时生效？\n"
            "1.5 million of what?")
    assert [q.text for q in from_message(text, "msg")] == [
        "What was the revenue?", "Who signed it?", "金额是多少？", "何时生效？", "1.5 million of what?"]
    assert all(q.name == q.text and q.type is None for q in from_message(text, "msg"))


def test_a_table_pasted_from_a_spreadsheet_is_read_as_a_questions_file() -> None:
    text = "name\tquestion\ttype\namount\tHow much was paid?\tnumber\nsigned\tIs it signed?\tyes/no"
    assert from_message(text, "msg") == (Question("How much was paid?", "amount", AnswerType.NUMBER),
                                         Question("Is it signed?", "signed", AnswerType.YES_NO))


def test_a_message_of_marks_alone_or_a_question_twice_is_refused() -> None:
    with pytest.raises(GridError) as error:
        from_message("- \n* ", "the message")
    assert error.value.key == "grid_no_questions"
    with pytest.raises(GridError) as error:
        from_message("Who?\n- Who?", "the message")
    assert error.value.key == "grid_questions_twice"


def test_kept_counts_the_documents_a_checkpoint_holds_and_a_cut_line_not(tmp_path: Path) -> None:
    output = tmp_path / "grid.xlsx"
    assert kept(output) == 0
    checkpoint = GridCheckpoint.open(checkpoint_path(output), "job")
    checkpoint.record(Row("a.md", "a" * 64, (Cell("42"),)))
    checkpoint.record(Row("b.md", "b" * 64, (Cell("", ("no answer",), failed=True),)))  # asked again
    checkpoint.close()
    assert kept(output) == 1
    with checkpoint_path(output).open("a", encoding="utf-8") as f:
        f.write('{"document": "c.md", "key": "c')  # a kill cut the last line short
    assert kept(output) == 1
