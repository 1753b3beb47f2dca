"""The grid's item builder: one document opened through the shelf (asking.open_file, as
`summarize` opens it) and each question asked of it in turn, one cell each.

The questions of a document go one after another, never together: asked whole, the prompt is the
document first and the question last (answer.whole_prompt, sent as the shelf's token ids), so once
the first question's prompt is read, every later one finds the document in vLLM's prefix cache;
asked together, each would read the document again before any was cached.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from glm1m.catalog import Said, render, said
from glm1m.documents.asking import Door, Opened, ask, open_file, open_shelved
from glm1m.documents.budget import Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import NotOnShelf, Shelf, file_sha256
from glm1m.errors import UserFacingError
from glm1m.grid.answers import asked, read_answer, structured
from glm1m.grid.citations import Passage, missing, passages
from glm1m.grid.questions import Question
from glm1m.llm import ChatParams, Llm, text_of
from glm1m.settings import Settings


@dataclass(frozen=True)
class Cell:
    """One question's answer about one document, as the grid shows it."""
    text: str  # the answer and its citations as the model wrote them; "" when none came
    problems: tuple[str, ...] = ()  # why it is marked, in the job's language; () it is not
    failed: bool = False  # no answer came (the server's error): a rerun asks it again
    passages: tuple[Passage, ...] = ()
    absent: bool = False  # the document does not answer it: text is the catalog's sentence

    @property
    def marked(self) -> bool:
        """Answered, but with a problem (not of its type, a citation the document lacks)."""
        return bool(self.problems) and not self.failed


@dataclass(frozen=True)
class Row:
    """One document's cells, in the questions' order; or why the document could not be read."""
    document: str  # the file's name
    key: str  # its bytes' sha256: what the checkpoint keeps it under
    cells: tuple[Cell, ...] = ()
    problem: str | None = None  # the document could not be read or counted: no cells

    @property
    def complete(self) -> bool:
        """Every cell answered (marked ones included): the checkpoint keeps it, a rerun skips it."""
        return self.problem is None and not any(cell.failed for cell in self.cells)


@dataclass(frozen=True)
class Asking:
    """What every document of a job is asked with."""
    questions: tuple[Question, ...]
    llm: Llm
    settings: Settings
    shelf: Shelf
    options: ReadOptions
    params: ChatParams
    lang: str
    # Documents read (and counted) one at a time: reading is this machine's work (OCR takes a
    # process per core already), and the shelf allows a user only a few reads at once.
    reading: asyncio.Lock
    door: Door = Door()


OnCell = Callable[[Cell], None]


def params_of(settings: Settings) -> ChatParams:
    """What a grid's cells are asked with, from either door. Temperature 0: extraction, not
    writing, so a rerun gives the same cell. Not one_shot: a document read whole is sent again
    with each of its questions, and a long one is worth keeping in the server's host KV tier when
    other documents' prompts push it out of the GPU cache between them (as a document's sections
    are, doc_translation/job.py); past the context, map-reduce and look-up keep their own requests
    out of the tier (mapreduce.py, lookup.py)."""
    return ChatParams(temperature=0.0, max_tokens=settings.max_tokens)


@dataclass(frozen=True)
class ShelfDocument:
    """A document named on the shelf (`glm1m grid --shelf`): asked from its kept text, no file."""
    sha256: str
    name: str


Source = Path | ShelfDocument


def key_of(source: Source) -> str:
    """What a document's row is kept under: its bytes' sha256 (the shelf's key of a file too)."""
    return source.sha256 if isinstance(source, ShelfDocument) else file_sha256(source)


async def ask_document(source: Source, key: str, job: Asking, on_cell: OnCell) -> Row:
    """Open `source` and ask it every question; `on_cell` as each cell is done. A document that
    cannot be opened is a Row with its reason (no cells): it stops nothing."""
    try:
        async with job.reading:
            opened = await open_source(source, job)
    except UserFacingError as error:
        return Row(source.name, key, problem=error.in_language(job.lang))
    cells = []
    for number, question in enumerate(job.questions):
        cell = await ask_cell(opened, question, job, first=number == 0)
        on_cell(cell)
        cells.append(cell)
    return Row(source.name, key, tuple(cells))


async def open_source(source: Source, job: Asking) -> Opened:
    """A file read through the shelf, or a shelf document's kept text (taken off the shelf since
    the job started: NotOnShelf, its row marked)."""
    answer_tokens = job.params.max_tokens
    if isinstance(source, Path):
        return await open_file(source, source.name, job.shelf, job.options, job.llm, job.settings,
                               answer_tokens, job.door)
    shelved = await job.shelf.aio.latest(source.sha256)
    if shelved is None:
        raise NotOnShelf(key="shelf_not_found", name=source.name)
    return await open_shelved(shelved, job.shelf, job.llm, job.settings, answer_tokens, job.door)


async def ask_cell(opened: Opened, question: Question, job: Asking, first: bool) -> Cell:
    """One question about an opened document: the answer, read for its type, its citations checked."""
    doc = opened.doc
    params = job.params
    if question.type is not None and doc.strategy is Strategy.WHOLE:
        # Read part by part, the schema would hold every part's note to it: answers.py.
        params = replace(params, extra={**(params.extra or {}), **structured(question.type)})
    pieces = []
    try:
        async for piece in ask(doc, asked(question, doc.text.kind), job.llm, params, job.door,
                               to=opened.to if first else None):
            pieces.append(piece)
    except UserFacingError as error:
        return Cell("", (error.in_language(job.lang),), failed=True)
    read = read_answer(question, text_of(pieces))
    if read.absent:
        return Cell(render(job.lang, "grid_not_in_document"), absent=True)
    problems: list[Said] = [read.problem] if read.problem is not None else []
    if wrong := missing(doc.text, read.text):
        problems.append(said("grid_problem_citation", citations=" ".join(wrong)))
    return Cell(read.text, tuple(p.render(job.lang) for p in problems),
                passages=tuple(passages(doc.text, read.text)))


def mark(cell: Cell) -> str:
    """The cell as the sheet shows it: a marked one begins with "⚠ " (its reasons are in the
    problems sheet)."""
    return f"⚠ {cell.text}" if cell.problems else cell.text


def unread_cell(lang: str) -> str:
    """What a cell of a document that could not be read shows."""
    return render(lang, "grid_cell_unread")
