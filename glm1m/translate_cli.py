"""`glm1m translate IN.csv --to en`: the same engine as the UI, with a progress bar on stderr.

Exit 0 when every row is translated, 1 when some failed (the output is written and they are
marked), 2 with one line on stderr when nothing could start (bad input, server unreachable),
130 when stopped with Ctrl-C (finished rows are kept; run the same command again to continue).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from chainlit_app.batch import Summary, run_job
from chainlit_app.errors import UserFacingError
from chainlit_app.llm import Llm
from chainlit_app.settings import Settings
from chainlit_app.table import CsvSource, open_source, read_glossary
from chainlit_app.translate import Job
from chainlit_app.translate import Progress as JobProgress


def add_translate_command(commands: argparse._SubParsersAction) -> None:
    defaults = Settings()
    p = commands.add_parser("translate", help="translate one column of a CSV file, row by row")
    p.add_argument("input", type=Path, help="the CSV file (UTF-8, UTF-8 with BOM, or GBK/GB18030)")
    p.add_argument("--to", required=True, help="target language, e.g. en, English, 中文")
    p.add_argument("--from", dest="source_language", default=None, help="source language")
    p.add_argument("--column", default=None, help="column to translate (default: first text column)")
    p.add_argument("--glossary", type=Path, default=None, help="two-column CSV: term, translation")
    p.add_argument("--concurrency", type=int, default=defaults.translate_concurrency,
                   help="requests in flight at once")
    p.add_argument("--max-tokens", type=int, default=defaults.translate_max_tokens,
                   help="longest translation of one cell, in tokens")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="output CSV (default: IN.translated.csv)")
    p.add_argument("--base-url", default=defaults.base_url, help="OpenAI-compatible server URL")
    p.set_defaults(run=cmd_translate)


def fail(text: str) -> int:
    print(f"glm1m: {text}", file=sys.stderr)
    return 2


def cmd_translate(args: argparse.Namespace) -> int:
    if args.concurrency < 1 or args.max_tokens < 1:
        return fail("--concurrency and --max-tokens must be at least 1.")
    try:
        source = open_source(args.input, args.column)
        glossary = read_glossary(args.glossary) if args.glossary else ()
    except UserFacingError as error:
        return fail(str(error))
    job = Job(target_language=args.to, source_language=args.source_language, glossary=glossary,
              concurrency=args.concurrency, max_tokens=args.max_tokens)
    output = args.output or args.input.with_name(args.input.stem + ".translated.csv")
    print(f"glm1m: reading {source.path.name} as {source.encoding_name}; translating column "
          f"{source.column!r} into {job.target_language} → {output}", file=sys.stderr)
    try:
        summary = asyncio.run(translate_with_bar(source, job, output, args.base_url))
    except KeyboardInterrupt:
        print(f"glm1m: stopped. Finished rows are in {output}; run the same command again to "
              f"continue.", file=sys.stderr)
        return 130
    except UserFacingError as error:
        return fail(str(error))
    print(f"glm1m: {summary.line()}", file=sys.stderr)
    return 0 if summary.complete else 1


async def translate_with_bar(source: CsvSource, job: Job, output: Path, base_url: str) -> Summary:
    llm = Llm(Settings(base_url=base_url))
    try:
        await llm.max_model_len()  # fail fast, before marking every row as failed
        with Progress(TextColumn("translating"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[status]}"), TimeRemainingColumn(),
                      transient=False) as bar:
            task = bar.add_task("rows", total=None, status="")

            def show(progress: JobProgress) -> None:
                bar.update(task, total=progress.total, completed=progress.finished,
                           status=f"{progress.failed} failed, {progress.rows_per_s:.1f} rows/s")

            return await run_job(source, job, llm, output, show)
    finally:
        await llm.aclose()
