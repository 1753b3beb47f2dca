"""The questions of a grid: given on the command line, or read from a CSV or XLSX file with the
columns `question` and, optionally, `name` (the grid's column header) and `type` (text, number,
date, yes/no, list). A question with a type is answered as JSON with that shape (answers.py)."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from glm1m.errors import GridError

HEADERS = ("question", "name", "type")
# A list's mark before a question typed one a line: "- ", "* ", "• ", "1. ", "2) ", "3、", "（4）".
LIST_MARK = re.compile(r"^\s*(?:[-*•·]\s+|\d+[.)]\s+|\d+、\s*|[（(]\d+[)）]\s*)")


class AnswerType(StrEnum):
    TEXT = "text"
    NUMBER = "number"
    DATE = "date"
    YES_NO = "yes/no"
    LIST = "list"

    @classmethod
    def of(cls, word: str) -> AnswerType | None:
        """"number", "Yes/No", "yes-no", "bool" …; None for an empty cell (untyped prose)."""
        word = word.strip().lower().replace(" ", "")
        if not word:
            return None
        aliases = {"yes-no": "yes/no", "yesno": "yes/no", "bool": "yes/no", "boolean": "yes/no"}
        try:
            return cls(aliases.get(word, word))
        except ValueError:
            return None


@dataclass(frozen=True)
class Question:
    text: str
    name: str  # the grid's column header
    type: AnswerType | None = None  # None: answered in prose, citations as the model writes them


def from_args(texts: Sequence[str]) -> tuple[Question, ...]:
    """Repeated --question: each its own column, headed by its words."""
    questions = tuple(Question(text.strip(), text.strip()) for text in texts if text.strip())
    if not questions:
        raise GridError(key="grid_no_questions", name="--question")
    return check_names(questions)


def from_message(text: str, name: str) -> tuple[Question, ...]:
    """The questions a person typed: one a line, each its own column headed by its words (a
    list's marks taken off); or a table pasted from a spreadsheet (its cells tab-separated) whose
    first row names the column `question`, read as a questions file is. `name`: the message as
    an error names it."""
    lines = [line for line in text.splitlines() if line.strip()]
    rows = [line.split("\t") for line in lines]
    if rows and "question" in [cell.strip().lower() for cell in rows[0]]:
        return questions_of(rows, name)
    questions = tuple(Question(asked, asked) for line in lines if (asked := LIST_MARK.sub("", line).strip()))
    if not questions:
        raise GridError(key="grid_no_questions", name=name)
    return check_names(questions)


def read_questions(path: Path) -> tuple[Question, ...]:
    """The questions of a .csv or .xlsx file (its first sheet), one a row under a header row
    naming `question` and optionally `name` and `type`. Raises GridError saying what is wrong."""
    if not path.is_file():
        raise GridError(key="grid_questions_missing", path=path)
    from glm1m.translation import table, xlsx
    from glm1m.translation.formats import named

    # The tables' registry (translation/formats.py) says which format the name is.
    readers = {table.FORMAT: read_csv, xlsx.FORMAT: read_xlsx}
    reader = readers.get(named(path.name))  # type: ignore[arg-type]
    if reader is None:
        raise GridError(key="grid_questions_format", name=path.name)
    return questions_of(reader(path), path.name)


def read_csv(path: Path) -> list[list[str]]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            return [list(row) for row in csv.reader(f)]
    except (UnicodeDecodeError, csv.Error) as error:
        raise GridError(key="grid_questions_unreadable", name=path.name, why=str(error)) from error


def read_xlsx(path: Path) -> list[list[str]]:
    from openpyxl import load_workbook  # type: ignore[import-untyped]
    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as error:  # openpyxl raises zipfile's, KeyError, its own InvalidFileException …
        raise GridError(key="grid_questions_unreadable", name=path.name, why=str(error)) from error
    try:
        sheet = book.worksheets[0]
        return [["" if v is None else str(v) for v in row] for row in sheet.iter_rows(values_only=True)]
    finally:
        book.close()


def questions_of(rows: Iterable[list[str]], name: str) -> tuple[Question, ...]:
    """Rows under a header row: the header names the columns, in any order and case."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise GridError(key="grid_no_questions", name=name)
    header = [cell.strip().lower() for cell in rows[0]]
    if "question" not in header:
        raise GridError(key="grid_questions_header", name=name, found=", ".join(rows[0]))
    at = {column: header.index(column) for column in HEADERS if column in header}

    def cell(row: list[str], column: str) -> str:
        index = at.get(column)
        return row[index].strip() if index is not None and index < len(row) else ""

    questions = []
    for number, row in enumerate(rows[1:], start=2):
        text = cell(row, "question")
        if not text:
            continue
        word = cell(row, "type")
        kind = AnswerType.of(word)
        if word and kind is None:
            raise GridError(key="grid_questions_type", name=name, row=number, type=word,
                            types=", ".join(t.value for t in AnswerType))
        questions.append(Question(text, cell(row, "name") or text, kind))
    if not questions:
        raise GridError(key="grid_no_questions", name=name)
    return check_names(tuple(questions))


def check_names(questions: tuple[Question, ...]) -> tuple[Question, ...]:
    """Each column's header once: two questions of one name would be one column."""
    seen: set[str] = set()
    for question in questions:
        if question.name in seen:
            raise GridError(key="grid_questions_twice", column=question.name)
        seen.add(question.name)
    return questions
