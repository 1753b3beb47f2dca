"""Markdown and plain-text files: decoded as the CSV reader decodes (glm1m.encoding: UTF-8,
UTF-16 or UTF-32 with a BOM or without, else the encoding charset-normalizer finds), cut into
sections at their headings, each part located by its lines (what an editor shows)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from glm1m.documents.pages import DocumentText
from glm1m.documents.sections import Block, document
from glm1m.encoding import detect_encoding
from glm1m.errors import DocumentError

ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")  # "## Installation ##"
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")  # the line under "Installation"
FENCE = re.compile(r"^ {0,3}(```+|~~~+)")
SAVE_AS_UTF8 = "advice_text_utf8"  # a glm1m/catalog id


def decode(path: Path, name: str) -> str:
    encoding = detect_encoding(path, name, DocumentError, SAVE_AS_UTF8)
    text = path.read_text(encoding=encoding)
    if "\0" in text:
        raise DocumentError(key="doc_not_text", name=name)
    return text


def read_text_file(path: Path, name: str, markdown: bool) -> DocumentText:
    """Sections at headings: Markdown's `#` and underlined ones; in a .txt file only underlined
    ones ("Title" over "=====", as RFCs and Debian's text specs write them: a "#" line there is
    as often a comment or a shell prompt)."""
    text = decode(path, name)
    doc = document(name, blocks(text.splitlines(), markdown))
    if not doc.pages:
        raise DocumentError(key="doc_blank_lines", name=name)
    return doc


def blocks(lines: list[str], markdown: bool) -> Iterator[Block]:
    """Paragraphs (runs of lines between blank lines; a fenced code block whole) and headings,
    with their 1-based line numbers."""
    para: list[str] = []
    start = 0
    fence: str | None = None

    def flush(end: int) -> Iterator[Block]:
        if para:
            yield Block("\n".join(para), None, start, end)
            para.clear()

    for number, line in enumerate(lines, start=1):
        if fence is not None:  # inside a code block: nothing is a heading or a paragraph end
            para.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        if markdown and (opening := FENCE.match(line)):
            if not para:
                start = number
            para.append(line)
            fence = opening.group(1)[:3]
            continue
        if not line.strip():
            yield from flush(number - 1)
            continue
        if markdown and (atx := ATX.match(line)):
            yield from flush(number - 1)
            yield Block(line.strip(), (atx.group(2) or "").strip(), number, number)
            continue
        if len(para) == 1 and SETEXT.match(line) and not (
                line.strip()[0] == "-" and para[0].strip()[:1] in "-*+>|"):
            # "Title" then "=====" (or "-----"): the paragraph of one line is the heading. A
            # list item or quote over "---" is Markdown's rule line, not a heading.
            yield Block(f"{para[0]}\n{line}", para[0].strip(), start, number)
            para.clear()
            continue
        if not para:
            start = number
        para.append(line)
    yield from flush(len(lines))
