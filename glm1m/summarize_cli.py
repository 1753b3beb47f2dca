"""`glm1m summarize FILE.pdf [--question ...]`: the answer on stdout, progress on stderr.

Exit 0 on success; 2 with one line on stderr when the file cannot be read or the server is not
reachable (nothing was answered).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from rich.progress import Progress

from chainlit_app import documents
from chainlit_app.errors import UserFacingError
from chainlit_app.llm import ChatParams, Llm
from chainlit_app.pdf import PdfLimits, extract
from chainlit_app.settings import Settings


def add_summarize_command(commands: argparse._SubParsersAction) -> None:
    defaults = Settings()
    p = commands.add_parser("summarize", help="summarise a PDF, or answer a question about it, with page citations")
    p.add_argument("pdf", type=Path)
    p.add_argument("--question", default=None, help="a question instead of a summary")
    p.add_argument("--strategy", choices=["auto", "whole", "map-reduce"], default="auto",
                   help=f"auto: whole document up to {defaults.whole_document_threshold:,} tokens, "
                        f"else map-reduce")
    p.add_argument("--max-tokens", type=int, default=defaults.max_tokens, help="longest answer")
    p.add_argument("--base-url", default=defaults.base_url)
    p.set_defaults(run=cmd_summarize)


def cmd_summarize(args: argparse.Namespace) -> int:
    settings = Settings(base_url=args.base_url, max_tokens=args.max_tokens)
    try:
        asyncio.run(summarize(args, settings))
    except UserFacingError as error:
        print(f"glm1m: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("glm1m: stopped.", file=sys.stderr)
        return 130
    return 0


async def summarize(args: argparse.Namespace, settings: Settings) -> None:
    err = sys.stderr
    with Progress(console=None, transient=True, redirect_stdout=False) as bar:
        task = bar.add_task("reading pages", total=None)
        pdf = await asyncio.to_thread(
            extract, args.pdf, PdfLimits(settings.pdf_max_mb, settings.pdf_max_pages), None,
            lambda done, total: bar.update(task, completed=done, total=total))
    llm = Llm(settings)
    try:
        budget = await documents.measure(pdf, llm, settings.whole_document_threshold, settings.max_tokens)
        strategy = budget.default if args.strategy == "auto" else documents.Strategy(args.strategy)
        documents.check_strategy(budget, strategy)
        print(f"glm1m: {pdf.name}: {budget.line()} Strategy: {strategy.value}.", file=err)
        if strategy is documents.Strategy.WHOLE:
            print(f"glm1m: {documents.describe_wait(budget.tokens)}", file=err)
        plan = documents.map_reduce_plan(budget, settings.map_chunk_tokens, settings.map_concurrency,
                                         settings.map_note_tokens)

        def progress(stage: str, done: int, total: int) -> None:
            print(f"glm1m: {stage}: {done}/{total}", file=err, flush=True)

        question = args.question or documents.SUMMARY_REQUEST
        params = ChatParams(temperature=settings.temperature, max_tokens=settings.max_tokens)
        async for piece in documents.answer(pdf, budget, strategy, question, llm, params, plan, progress):
            sys.stdout.write(piece)
            sys.stdout.flush()
        sys.stdout.write("\n")
    finally:
        await llm.aclose()
