"""`glm1m extract FILE [--ocr auto|always|never]`: the text the model reads, with its location
markers ([p. N] before each page, [§ N] before each section), on stdout — as `pdftotext` does, so
a person can check what the model sees. Progress (OCR: pages per second, time left) on stderr.

Exit 0 when the text was printed (a damaged file read as far as it goes: a line on stderr names
the pages lost); 2 with one line on stderr for a file it cannot read; 130 when stopped with
Ctrl-C (the OCR processes are ended first).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from glm1m.catalog import said
from glm1m.cli.output import fail, language, say
from glm1m.documents.pages import Kind, Page, lost_note
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress
from glm1m.settings import Settings

OCR_MODES = ("auto", "always", "never")
EVERY_S = 1.0  # at most one progress line a second (and the last one of each stage)


def add_command(commands: argparse._SubParsersAction) -> None:
    p = commands.add_parser("extract", help="print the text the model reads from a document, "
                                            "with its page or section markers")
    p.add_argument("file", type=Path, help="PDF, XPS, DOCX, EPUB, MOBI, FB2, HTML, Markdown or TXT")
    p.add_argument("--ocr", choices=OCR_MODES, default=None,
                   help="auto: OCR pages without a text layer (default, GLM1M_OCR); always: "
                        "every page; never: no OCR")
    p.add_argument("--locations", action="store_true",
                   help="print each section's heading and paragraphs (or lines) beside its marker")
    p.set_defaults(run=cmd_extract)


def cmd_extract(args: argparse.Namespace) -> int:
    from glm1m.documents.formats import ReadOptions, read_document

    settings = Settings()
    try:
        if not args.file.is_file():
            return fail(DocumentError(key="doc_not_a_file", path=args.file))
        text = read_document(args.file, ReadOptions.of(settings, args.ocr), args.file.name,
                             throttled())
    except OSError as error:
        return fail(DocumentError(key="doc_cannot_read_file", path=args.file, reason=error.strerror or error))
    except KeyboardInterrupt:
        return fail(said("cli_stopped"), 130)
    if (note := lost_note(text, language())) is not None:
        say(note)  # on stderr, before the text: a damaged file read as far as it goes
    try:
        for number, page in enumerate(text.pages):
            sys.stdout.write(("\n\n" if number else "") + shown(page, args.locations))
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `glm1m extract x.pdf | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def shown(page: Page, locations: bool) -> str:
    if not locations or page.kind is Kind.PAGE:
        return page.marked()
    where = " · ".join(part for part in (page.heading, page.span) if part)
    return f"{page.kind.mark.format(page.number)} {where}\n{page.text}"


def throttled() -> OnProgress:
    """An OnProgress saying `Progress.line()` (in the CLI's language) now and then: a second
    apart, and at each end."""
    last_at, last_stage, lang = 0.0, "", language()

    def report(progress: Progress) -> None:
        nonlocal last_at, last_stage
        now = time.monotonic()
        if progress.finished or progress.stage != last_stage or now - last_at >= EVERY_S:
            last_at, last_stage = now, progress.stage
            say(progress.line(lang))

    return report
