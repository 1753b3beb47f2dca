"""`glm1m translate IN.csv --to en` (or IN.xlsx, with --sheet and one --column per column): the
same engine as the UI, with a progress bar on stderr. The output is in the input's format.
A document (Markdown, text, HTML, DOCX, PDF, EPUB) is translated section by section instead,
with the whole document in view and its structure kept (translate_document.py).

Exit 0 when every row is translated, 1 when some failed (the output is written and they are
marked), 2 with one line on stderr when nothing could start (bad input, server unreachable),
130 when stopped with Ctrl-C (finished rows are kept; run the same command again to continue).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from glm1m.catalog import EN, render, said
from glm1m.cli.output import fail, language, say
from glm1m.settings import Settings

if TYPE_CHECKING:
    from glm1m.translation.fanout import Job
    from glm1m.translation.job import Summary
    from glm1m.translation.source import TableSource


def add_command(commands: argparse._SubParsersAction) -> None:
    # No Settings here: building the parser reads no environment or .env; the command does.
    p = commands.add_parser("translate", help="translate columns of a CSV or XLSX file, row by row, "
                            "or a Markdown, text, HTML, DOCX, PDF or EPUB document in place, "
                            "section by section")
    p.add_argument("input", type=Path, help="the CSV file (UTF-8, GBK/GB18030, Windows-1252, ...: "
                                            "detected) or .xlsx workbook; or a .md, .txt, .html, "
                                            ".docx, .pdf or .epub document")
    p.add_argument("--to", required=True, help="target language, e.g. en, English, 中文")
    p.add_argument("--from", dest="source_language", default=None, help="source language")
    p.add_argument("--sheet", default=None, help="the workbook's sheet (default: the one Excel "
                                                 "opens on)")
    p.add_argument("--column", action="append", default=[], help="column to translate, by header "
                   "(or letter, in a workbook); repeat for several (default: first text column)")
    p.add_argument("--glossary", type=Path, default=None, help="two-column CSV: term, translation")
    p.add_argument("--concurrency", type=int, default=None,
                   help="requests in flight at once (default: GLM1M_TRANSLATE_CONCURRENCY)")
    p.add_argument("--max-tokens", type=int, default=None, help="longest translation of one cell "
                   "or section, in tokens (default: GLM1M_TRANSLATE_MAX_TOKENS)")
    p.add_argument("--bilingual", action="store_true", help="PDF: the original and the translated "
                   "pages alternating in the output (original 1, translation 1, original 2, ...)")
    p.add_argument("--context-tokens", type=int, default=None, metavar="N",
                   help="documents: at most N tokens of the document beside each section (windows of "
                        "neighbouring sections; default 16384); 0: the whole document beside every "
                        "section while it fits the served context, which took ~10x as long on a "
                        "287K-token document (docs/benchmarks.md)")
    p.add_argument("-o", "--output", type=Path, default=None,
                   help="output file (default: IN.translated.csv, .xlsx, or the document's suffix)")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible server URL (default: "
                   "GLM1M_BASE_URL)")
    p.set_defaults(run=cmd_translate)


def cmd_translate(args: argparse.Namespace) -> int:
    from glm1m.translation.fanout import Job
    from glm1m.translation.formats import open_table
    from glm1m.translation.job import check_output
    from glm1m.translation.table import read_glossary

    settings = Settings() if args.base_url is None else Settings(base_url=args.base_url)
    concurrency = settings.translate_concurrency if args.concurrency is None else args.concurrency
    max_tokens = settings.translate_max_tokens if args.max_tokens is None else args.max_tokens
    if concurrency < 1 or max_tokens < 1:
        return fail(said("cli_concurrency_least"))
    from glm1m.doc_translation.formats import translates_in_place
    if translates_in_place(args.input):
        from glm1m.cli.translate_document import cmd_translate_document
        return cmd_translate_document(args, settings, concurrency, max_tokens)
    if args.bilingual:
        return fail(said("doc_tr_bilingual_pdf", name=args.input.name))
    if args.context_tokens is not None:
        return fail(said("doc_tr_context_tokens_table", name=args.input.name))
    inputs = [p for p in (args.input, args.glossary) if p]
    if args.output:  # before reading anything: the output must not be an input
        check_output(args.output, *inputs)
    source = open_table(args.input, sheet=args.sheet, columns=args.column, settings=settings)
    output = args.output or args.input.with_name(
        f"{args.input.stem}.translated{source.output_suffix}")
    glossary = read_glossary(args.glossary) if args.glossary else ()
    job = Job(target_language=args.to, source_language=args.source_language, glossary=glossary,
              concurrency=concurrency, max_tokens=max_tokens, lang=language())
    say(said("cli_translating", what=source.describe_said(), target=job.target_language, output=output))
    try:
        summary = asyncio.run(translate_with_bar(source, job, output, settings))
    except KeyboardInterrupt:
        say(stopped_line(output, source, job.lang))
        return 130
    say(summary.line(job.lang))
    return 0 if summary.complete else 1


def stopped_line(output: Path, source: TableSource | None = None, lang: str = EN) -> str:
    from glm1m.translation.csv_output import is_finished_output
    from glm1m.translation.job import checkpoint_path

    finished = source.is_finished(output) if source is not None else is_finished_output(output)
    if not checkpoint_path(output).exists():  # never started, or every row was done
        if finished:
            return render(lang, "tr_stopped_all_done", output=output)
        return render(lang, "tr_stopped_before_began")
    if not output.exists():  # stopped before a row was translated: run_job wrote nothing
        return render(lang, "tr_stopped_nothing")
    if finished:  # a rerun of a finished job: run_job left that output as it was
        return render(lang, "tr_stopped_kept", output=output)
    return render(lang, "tr_stopped_continue", output=output)


async def translate_with_bar(source: TableSource, job: Job, output: Path,
                             settings: Settings) -> Summary:
    from glm1m.cli.bar import progress_bar
    from glm1m.llm import LlmClient
    from glm1m.translation.job import run_job

    llm = LlmClient(settings)
    try:
        await llm.max_model_len()  # fail fast, before marking every row as failed
        with progress_bar() as show:
            return await run_job(source, job, llm, output, show)
    finally:
        await llm.aclose()
