"""`glm1m summarize FILE [--question ...] [--ocr auto|always|never]`, FILE of any format glm1m
reads: the answer on stdout, progress on stderr.

Exit 0 on success; 2 with one line on stderr when the file cannot be read or the server is not
reachable (nothing was answered); 130 when stopped with Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from glm1m.cli.output import fail, say
from glm1m.errors import DocumentError, UserFacingError
from glm1m.settings import Settings

STRATEGIES = ("auto", "whole", "map-reduce")


def add_command(commands: argparse._SubParsersAction) -> None:
    defaults = Settings()
    p = commands.add_parser("summarize",
                            help="summarise a document, or answer a question about it, with cited "
                                 "pages or sections")
    p.add_argument("pdf", type=Path, metavar="file",
                   help="PDF, XPS, DOCX, EPUB, MOBI, FB2, HTML, Markdown or TXT")
    p.add_argument("--ocr", choices=("auto", "always", "never"), default=None,
                   help="auto: OCR pages without a text layer (default, GLM1M_OCR); always: "
                        "every page; never: no OCR")
    p.add_argument("--question", default=None, help="a question instead of a summary")
    p.add_argument("--strategy", choices=STRATEGIES, default="auto",
                   help=f"auto: whole document up to {defaults.whole_document_threshold:,} tokens, "
                        f"else map-reduce")
    p.add_argument("--max-tokens", type=int, default=defaults.max_tokens, help="longest answer")
    p.add_argument("--base-url", default=defaults.base_url)
    p.add_argument("--user", default=None,
                   help="whose shelf of read documents to use (default: the one shelf of an app "
                        "without login); see `glm1m shelf list`")
    p.set_defaults(run=cmd_summarize)


def cmd_summarize(args: argparse.Namespace) -> int:
    settings = Settings(base_url=args.base_url, max_tokens=args.max_tokens)
    try:
        asyncio.run(summarize(args, settings))
    except UserFacingError as error:
        return fail(str(error))
    except KeyboardInterrupt:
        return fail("stopped.", 130)
    return 0


async def summarize(args: argparse.Namespace, settings: Settings) -> None:
    from glm1m.cli.bar import progress_bar
    from glm1m.cli.waiting import until_first_piece, waiting_line
    from glm1m.documents.answer import SUMMARY_REQUEST, OpenDocument, answer, plan_of
    from glm1m.documents.budget import Strategy
    from glm1m.documents.formats import ReadOptions
    from glm1m.documents.shelf import Shelf
    from glm1m.documents.through_shelf import measure_through, noting_read, read_through, sending
    from glm1m.llm import ChatParams, LlmClient
    from glm1m.serving import PrefillClock, read

    params = ChatParams(temperature=settings.temperature, max_tokens=settings.max_tokens)
    shelf = Shelf.of(settings.data_dir, settings.shelf_max_mb, args.user)
    with progress_bar(transient=True) as show:
        if not args.pdf.is_file():
            raise DocumentError(f"{args.pdf} is not a file that can be read (check the path).")
        shelved, full = await read_through(shelf, args.pdf, args.pdf.name,
                                           ReadOptions.of(settings, args.ocr), show)
    if shelved.hit:
        say(f"{args.pdf.name}: on the shelf since {added_words(shelved.added)}, not read again.")
    if full is not None:
        say(str(full))
    llm = LlmClient(settings)
    try:
        wanted = None if args.strategy == "auto" else Strategy(args.strategy)
        budget = await measure_through(shelf, shelved, llm, settings.model,
                                       settings.whole_document_threshold)
        strategy = wanted or budget.default(params.max_tokens)
        budget.check(strategy, params.max_tokens)
        doc = OpenDocument(shelved.text, budget, strategy, plan_of(settings))
        say(f"{doc.name}: {doc.budget.line()} Strategy: {doc.strategy.value}.")
        pieces = answer(doc, args.question or SUMMARY_REQUEST, llm, params,
                        lambda progress: say(progress.line()))
        if doc.strategy is Strategy.WHOLE:
            clock = PrefillClock(read(settings))
            to = await sending(shelf, shelved, llm, settings.model, settings.base_url)
            before = to.before is not None
            say(clock.describe_wait(doc.budget.tokens,
                                    added_words(to.before) if to.before is not None else None))
            pieces = until_first_piece(
                noting_read(to, pieces),
                lambda s: waiting_line(doc.name, doc.budget.tokens, s, clock, before), settings.wait_line_s)
        async for piece in pieces:
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
    finally:
        await llm.aclose()


def added_words(when: float) -> str:
    """"2026-12-01 23:40" in local time: when a shelf document was first read (or last sent)."""
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(when))
