"""`glm1m translate FILE --to LANG` for a document (Markdown, text, HTML, DOCX, PDF, EPUB): translate.py
hands it here by the file's format. The output is the same format with its structure kept;
exit codes as for tables: 0 every section translated, 1 some kept in the original and marked,
2 bad input or no server, 130 stopped (run the same command again to continue)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from glm1m.catalog import said
from glm1m.cli.output import fail, language, say
from glm1m.settings import Settings

if TYPE_CHECKING:
    from glm1m.doc_translation.job import DocJob, DocSummary


def cmd_translate_document(args: argparse.Namespace, settings: Settings, concurrency: int,
                           max_tokens: int) -> int:
    from glm1m.doc_translation.job import DocJob
    from glm1m.documents.ocr import OcrOptions
    from glm1m.translation.job import check_output
    from glm1m.translation.table import read_glossary

    if args.sheet is not None or args.column:
        return fail(said("doc_tr_table_options", name=args.input.name))
    if args.context_tokens is not None and args.context_tokens < 0:
        return fail(said("doc_tr_context_tokens_least"))
    output: Path = args.output or args.input.with_name(
        f"{args.input.stem}.translated{args.input.suffix}")
    try:
        check_output(output, *[p for p in (args.input, args.glossary) if p])
        glossary = read_glossary(args.glossary) if args.glossary else ()
        if not args.input.is_file():
            raise FileNotFoundError(args.input)
    except OSError as error:
        return fail(str(error))
    job = DocJob(target_language=args.to, source_language=args.source_language, glossary=glossary,
                 concurrency=concurrency, max_tokens=max_tokens, lang=language(),
                 bilingual=args.bilingual, ocr=OcrOptions.of(settings), context_tokens=args.context_tokens)
    try:
        summary = asyncio.run(translate_with_bar(args.input, job, output, settings))
    except KeyboardInterrupt:
        say(said("doc_tr_stopped", output=output))
        return 130
    say(summary.line(job.lang))
    say(summary.consistency.said())
    for note in summary.notes:
        say(note)
    return 0 if summary.complete else 1


async def translate_with_bar(path: Path, job: DocJob, output: Path, settings: Settings) -> DocSummary:
    from glm1m.cli.bar import progress_bar
    from glm1m.doc_translation.job import run_document
    from glm1m.llm import LlmClient

    llm = LlmClient(settings)
    try:
        await llm.max_model_len()  # fail fast, before marking every section as failed
        say(said("cli_translating", what=path.name, target=job.target_language, output=output))
        with progress_bar() as show:
            return await run_document(path, job, llm, output, show, say)
    finally:
        await llm.aclose()
