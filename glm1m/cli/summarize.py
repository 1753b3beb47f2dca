"""`glm1m summarize FILE [FILE ...] [--question ...] [--ocr auto|always|never]`, FILE of any format
glm1m reads: the answer on stdout, progress on stderr. Several files are asked together as one set
(documents/sets.py), labelled A, B, C, … in the order given; the answer cites "[B p. 12]", and the
locations it cites are listed after it on stderr, each with its file.

Exit 0 on success; 2 with one line on stderr when the file cannot be read or the server is not
reachable (nothing was answered); 130 when stopped with Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from glm1m.catalog import Said, render, said
from glm1m.cli.output import fail, language, say
from glm1m.errors import DocumentError
from glm1m.settings import Settings

if TYPE_CHECKING:
    from glm1m.documents.asking import OpenedSet
    from glm1m.documents.budget import Strategy

STRATEGIES = ("auto", "whole", "map-reduce", "look-up")


def add_command(commands: argparse._SubParsersAction) -> None:
    # No Settings() here: the parser is built for every command (and --help); the settings are
    # read when this one runs.
    threshold = Settings.model_fields["whole_document_threshold"].default
    p = commands.add_parser("summarize",
                            help="summarise a document, or answer a question about it, with cited "
                                 "pages or sections")
    p.add_argument("pdf", type=Path, metavar="file", nargs="+",
                   help="PDF, XPS, DOCX, EPUB, MOBI, FB2, HTML, Markdown or TXT; several are asked "
                        "together, labelled A, B, C, … in this order")
    p.add_argument("--ocr", choices=("auto", "always", "never"), default=None,
                   help="auto: OCR pages without a text layer (default, GLM1M_OCR); always: "
                        "every page; never: no OCR")
    p.add_argument("--question", default=None, help="a question instead of a summary")
    p.add_argument("--strategy", choices=STRATEGIES, default="auto",
                   help=f"auto: whole document up to GLM1M_WHOLE_DOCUMENT_THRESHOLD tokens "
                        f"({threshold:,} unless set), else map-reduce; look-up: the model finds "
                        f"and reads the pages it needs with tools, a line for each lookup")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="longest answer (default: GLM1M_MAX_TOKENS)")
    p.add_argument("--base-url", default=None, help="the model server (default: GLM1M_BASE_URL)")
    p.add_argument("--user", default=None,
                   help="whose shelf of read documents to use (default: the one shelf of an app "
                        "without login); see `glm1m shelf list`")
    p.set_defaults(run=cmd_summarize)


def cmd_summarize(args: argparse.Namespace) -> int:
    given = {"base_url": args.base_url, "max_tokens": args.max_tokens}
    settings = Settings(**{name: value for name, value in given.items() if value is not None})
    try:
        asyncio.run(summarize(args, settings))
    except KeyboardInterrupt:
        return fail(said("cli_stopped"), 130)
    return 0


def files_of(args: argparse.Namespace) -> list[Path]:
    """The files asked, in order. `pdf` is a list from the parser, one Path where a caller builds
    the Namespace itself as before several files could be given."""
    return list(args.pdf) if isinstance(args.pdf, list | tuple) else [args.pdf]


async def summarize(args: argparse.Namespace, settings: Settings) -> None:
    """The document path of both doors (documents/asking.py), with this command's door."""
    from glm1m.chat import close_now
    from glm1m.cli.waiting import TerminalDoor
    from glm1m.documents.answer import SET_SUMMARY_REQUEST, SUMMARY_REQUEST
    from glm1m.documents.asking import ask, open_file, open_files
    from glm1m.documents.budget import Strategy, budget_said
    from glm1m.documents.formats import ReadOptions
    from glm1m.documents.shelf import Shelf
    from glm1m.llm import ChatParams, LlmClient
    from glm1m.serving import PrefillClock, read

    files = files_of(args)
    for path in files:
        if not path.is_file():
            raise DocumentError(key="doc_not_a_file", path=path)
    params = ChatParams(temperature=settings.temperature, max_tokens=settings.max_tokens)
    shelf = Shelf.of(settings.data_dir, settings.shelf_max_mb, args.user)
    clock = PrefillClock(read(settings))
    wanted = None if args.strategy == "auto" else Strategy(args.strategy)
    door = TerminalDoor(wanted, clock, settings.wait_line_s)
    llm = LlmClient(settings)
    options = ReadOptions.of(settings, args.ocr)
    question = args.question or (SUMMARY_REQUEST if len(files) == 1 else SET_SUMMARY_REQUEST)
    together: OpenedSet | None = None  # several files: the set, for the locations its answer cites
    try:
        if len(files) == 1:
            path = files[0]
            opened = await open_file(path, path.name, shelf, options, llm, settings, params.max_tokens,
                                     door)
            doc = opened.doc
            say(read_said(doc.name, budget_said(doc.budget), doc.strategy))
            pieces = ask(doc, question, llm, params, door, clock, opened.to)
        else:
            together = await open_files([(path, path.name) for path in files], shelf, options,
                                        llm, settings, params.max_tokens, door)
            doc = together.doc
            names = together.documents.said(door.lang)
            say(read_said(names, budget_said(doc.budget, together.documents.documents), doc.strategy))
            # No clock: a set's earlier documents may be in the server's cache, which says
            # nothing of its prefill speed. Its whole read is noted on the shelf (together.to).
            pieces = ask(doc, question, llm, params, door, to=together.to, fresh=True)
        answer = []
        try:
            async for piece in pieces:
                if isinstance(piece, str):  # not the event of a cut answer: the text shows it
                    answer.append(piece)
                    sys.stdout.write(piece)
                    sys.stdout.flush()
        finally:
            await close_now(pieces)
        sys.stdout.write("\n")
        if together is not None and (cited := together.documents.cited("".join(answer))):
            say(said("cli_cited", places=render(language(), "cli_cited_sep").join(p.line for p in cited)))
    finally:
        door.close()
        await llm.aclose()


def read_said(name: str, budget: Said, strategy: Strategy) -> Said:
    """"report.pdf: 6 pages, 12,345 tokens — 1.2% of the served …-token context. Strategy: whole." """
    return said("cli_read", name=name, budget=budget,
                strategy=said(f"cli_strategy_{strategy.name.lower()}"))
