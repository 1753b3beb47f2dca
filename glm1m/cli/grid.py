"""`glm1m grid [FILE_OR_FOLDER…] [--shelf NAME…] (--question Q … | --questions FILE.csv|.xlsx)
[-o OUT.xlsx|OUT.csv]`: the same questions asked of every document (files, folders, documents on
the shelf), one table back: a row a document, a column a question, each cell the answer and its
citations; the passages cited on a sheet of their own. Progress per cell on stderr.

Exit 0 when every cell is answered (a typed question the document does not answer shows "not in
the document": answered, not marked); 1 when some are marked (an answer not of its type, a citation
of a location the document lacks, a document that could not be read, a failed request: the table
is written, they begin with "⚠ " and the problems sheet says why); 2 with one line on stderr when
nothing could start (bad input, server unreachable); 130 when stopped with Ctrl-C (finished
documents are kept: run the same command again to continue).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from glm1m.catalog import said
from glm1m.cli.output import fail, language, say
from glm1m.errors import GridError
from glm1m.settings import Settings

if TYPE_CHECKING:
    from glm1m.grid.cells import ShelfDocument, Source
    from glm1m.grid.job import Summary
    from glm1m.grid.questions import Question


def add_command(commands: argparse._SubParsersAction) -> None:
    # No Settings here: building the parser reads no environment or .env; the command does.
    p = commands.add_parser("grid", help="ask the same questions of many documents: one table of "
                                         "cited answers, a row a document")
    p.add_argument("inputs", type=Path, nargs="*", metavar="FILE_OR_FOLDER",
                   help="documents, or folders of them (their documents of any format glm1m reads, "
                        "not in subfolders)")
    p.add_argument("--shelf", action="append", default=[], metavar="NAME",
                   help="a document on the shelf, by its name or its hash's first digits (see "
                        "`glm1m shelf list`), asked from its kept text; repeat for several")
    asked = p.add_mutually_exclusive_group(required=True)
    asked.add_argument("--question", action="append", default=None,
                       help="a question, one column; repeat for several")
    asked.add_argument("--questions", type=Path, default=None,
                       help="a CSV or XLSX file: columns question, and optionally name (the "
                            "column's header) and type (text, number, date, yes/no, list)")
    p.add_argument("-o", "--output", type=Path, default=Path("grid.xlsx"),
                   help="the table: .xlsx (sheets grid, passages, problems) or .csv (with "
                        ".passages.csv and .problems.csv beside it); default grid.xlsx")
    p.add_argument("--ocr", choices=("auto", "always", "never"), default=None,
                   help="auto: OCR pages without a text layer (default, GLM1M_OCR)")
    p.add_argument("--concurrency", type=int, default=None,
                   help="documents asked at once (default: GLM1M_GRID_CONCURRENCY)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="longest answer of one cell (default: GLM1M_MAX_TOKENS)")
    p.add_argument("--base-url", default=None, help="the model server (default: GLM1M_BASE_URL)")
    p.add_argument("--user", default=None, help="whose shelf of read documents to use")
    p.set_defaults(run=cmd_grid)


def cmd_grid(args: argparse.Namespace) -> int:
    from glm1m.grid.questions import from_args, read_questions
    from glm1m.grid.workbook import writer_of

    given = {"base_url": args.base_url, "max_tokens": args.max_tokens}
    settings = Settings(**{name: value for name, value in given.items() if value is not None})
    concurrency = settings.grid_concurrency if args.concurrency is None else args.concurrency
    if concurrency < 1:
        return fail(said("cli_concurrency_least"))
    if writer_of(args.output) is None:
        raise GridError(key="grid_output_format", name=args.output.name)
    questions = read_questions(args.questions) if args.questions else from_args(args.question)
    documents = documents_of(args.inputs) + on_shelf(args.shelf, settings, args.user)
    if not documents:
        raise GridError(key="grid_no_input")
    say(said("cli_grid_start", count=len(documents), questions=len(questions), output=args.output))
    try:
        summary = asyncio.run(grid(documents, questions, args, settings, concurrency))
    except KeyboardInterrupt:
        return fail(said("cli_grid_stopped"), 130)
    if summary.resumed:
        say(said("cli_grid_resumed", count=summary.resumed))
    say(summary.said(len(questions)))
    return 0 if summary.complete else 1


def documents_of(inputs: list[Path]) -> tuple[Path, ...]:
    """The documents named: files as given, a folder's documents by name; each once."""
    from glm1m.documents.formats import format_of, named

    found: list[Path] = []
    for path in inputs:
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.is_file() and format_of(p.name))
            if not inside:
                raise GridError(key="grid_no_documents", path=path, formats=named())
            found += inside
        elif path.is_file():
            found.append(path)
        else:
            raise GridError(key="grid_not_found", path=path)
    unique = {p.resolve(): p for p in reversed(found)}  # the first of a file named twice
    return tuple(p for p in found if unique.get(p.resolve()) is p)


def on_shelf(names: list[str], settings: Settings, user: str | None) -> tuple[ShelfDocument, ...]:
    """The shelf documents named (`--shelf`), each once. Raises NotOnShelf for a name that
    matches none, or more than one."""
    from glm1m.documents.shelf import Shelf
    from glm1m.grid.cells import ShelfDocument

    if not names:
        return ()
    shelf = Shelf.of(settings.data_dir, settings.shelf_max_mb, user)
    found: dict[str, ShelfDocument] = {}
    for name in names:
        entry = shelf.one(name)
        found.setdefault(entry.sha256, ShelfDocument(entry.sha256, entry.name))
    return tuple(found.values())


async def grid(documents: tuple[Source, ...], questions: tuple[Question, ...],
               args: argparse.Namespace, settings: Settings, concurrency: int) -> Summary:
    from glm1m.cli.bar import progress_bar
    from glm1m.documents.formats import ReadOptions
    from glm1m.documents.shelf import Shelf
    from glm1m.grid.cells import Asking, params_of
    from glm1m.grid.job import run_grid
    from glm1m.llm import LlmClient

    llm = LlmClient(settings)
    asking = Asking(questions, llm, settings, Shelf.of(settings.data_dir, settings.shelf_max_mb, args.user),
                    ReadOptions.of(settings, args.ocr), params_of(settings), language(), asyncio.Lock())
    try:
        await llm.max_model_len()  # fail fast, before marking every cell as failed
        with progress_bar() as show:
            return await run_grid(documents, asking, args.output, concurrency, show)
    finally:
        await llm.aclose()
