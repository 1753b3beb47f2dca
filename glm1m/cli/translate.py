"""`glm1m translate IN.csv --to en`: the same engine as the UI, with a progress bar on stderr.

Exit 0 when every row is translated, 1 when some failed (the output is written and they are
marked), 2 with one line on stderr when nothing could start (bad input, server unreachable),
130 when stopped with Ctrl-C (finished rows are kept; run the same command again to continue).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from glm1m.cli.output import fail, say
from glm1m.errors import UserFacingError
from glm1m.settings import Settings

if TYPE_CHECKING:
    from glm1m.translation.fanout import Job
    from glm1m.translation.job import Summary
    from glm1m.translation.table import CsvSource


def add_command(commands: argparse._SubParsersAction) -> None:
    defaults = Settings()
    p = commands.add_parser("translate", help="translate one column of a CSV file, row by row")
    p.add_argument("input", type=Path, help="the CSV file (UTF-8, GBK/GB18030, Windows-1252, ...: detected)")
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


def cmd_translate(args: argparse.Namespace) -> int:
    from glm1m.translation.fanout import Job
    from glm1m.translation.job import check_output
    from glm1m.translation.table import open_source, read_glossary

    if args.concurrency < 1 or args.max_tokens < 1:
        return fail("--concurrency and --max-tokens must be at least 1.")
    output = args.output or args.input.with_name(args.input.stem + ".translated.csv")
    try:
        check_output(output, *[p for p in (args.input, args.glossary) if p])
        source = open_source(args.input, args.column)
        glossary = read_glossary(args.glossary) if args.glossary else ()
    except UserFacingError as error:
        return fail(str(error))
    job = Job(target_language=args.to, source_language=args.source_language, glossary=glossary,
              concurrency=args.concurrency, max_tokens=args.max_tokens)
    say(f"reading {source.path.name} as {source.encoding_name}; translating column "
        f"{source.column!r} into {job.target_language} → {output}")
    try:
        summary = asyncio.run(translate_with_bar(source, job, output, args.base_url))
    except KeyboardInterrupt:
        say(stopped_line(output))
        return 130
    except UserFacingError as error:
        return fail(str(error))
    say(summary.line())
    return 0 if summary.complete else 1


def stopped_line(output: Path) -> str:
    from glm1m.translation.job import checkpoint_path
    from glm1m.translation.table import is_finished_output

    finished = is_finished_output(output)
    if not checkpoint_path(output).exists():  # never started, or every row was done
        return f"stopped; every row is translated → {output}" if finished else "stopped before it began."
    if finished:  # a rerun of a finished job: run_job left that output as it was
        return (f"stopped. {output} keeps its earlier complete translation; run the same command "
                f"again to finish this run.")
    return f"stopped. Finished rows are in {output}; run the same command again to continue."


async def translate_with_bar(source: CsvSource, job: Job, output: Path, base_url: str) -> Summary:
    from glm1m.cli.bar import progress_bar
    from glm1m.llm import LlmClient
    from glm1m.translation.job import run_job

    llm = LlmClient(Settings(base_url=base_url))
    try:
        await llm.max_model_len()  # fail fast, before marking every row as failed
        with progress_bar() as show:
            return await run_job(source, job, llm, output, show)
    finally:
        await llm.aclose()
