"""Markdown and plain text cut into sections and written back line for line.

Blank lines are never inside a section, so they come back exactly as they were, and so do the
lines a section does not own: fenced and indented code, front matter, table separator rows, raw
HTML lines, link reference definitions, rules. In Markdown a section is a heading, a list item, a
quote line, a paragraph or one table cell; its markers ("## ", "- ", "> ", "1. ", "| ") stay on
their lines and only the text after them is sent. Link and image targets, autolinks and inline
code are sent as ⟦n⟧ and put back after, so the model cannot change them; an answer that drops
or repeats one fails the section (kept in the original and marked). In plain text a section is a
block of lines between blank lines, each line's indentation kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.doc_translation.sections import Section, comment, mark, translation
from glm1m.documents.text import FENCE
from glm1m.encoding import detect_encoding
from glm1m.errors import DocumentError
from glm1m.translation.fanout import Result

MARKER = re.compile(r"^[ \t]*(?:(?:>[ \t]?)|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)*"
                    r"(?:#{1,6}[ \t]+)?")
RULE = re.compile(r"^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$")
SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S")
RAW_HTML = re.compile(r"^ {0,3}<[A-Za-z!/]")
KEPT = re.compile(r"`+[^`\n]*`+|\]\([^)\s]*(?:[ \t]+\"[^\"]*\")?\)|<[a-z]+://[^>\s]+>")
SLOT = re.compile(r"⟦(\d+)⟧")
INDENT = re.compile(r"^[ \t]*")


@dataclass(frozen=True)
class Shape:
    """Where a section's text goes back: each line's prefix (marker or indentation), the pieces
    its ⟦n⟧ stand for, and how a mark is added (a cell's or heading's inline, others too)."""
    prefixes: tuple[str, ...]
    keeps: tuple[str, ...] = ()
    suffix: str = ""  # after the text on its last line (a table cell's padding and pipe)


@dataclass
class TextLayout:
    """Layout of a Markdown (`markdown`) or plain-text file."""
    markdown: bool
    newline: str
    pieces: list[str | int] = field(default_factory=list)  # text as it was, or a section's index
    sections: list[Section] = field(default_factory=list)
    shapes: dict[int, Shape] = field(default_factory=dict)
    notes: list[Said] = field(default_factory=list)

    def add(self, prefixes: list[str], bodies: list[str], suffix: str = "") -> None:
        keeps: list[str] = []

        def masked(match: re.Match[str]) -> str:
            keeps.append(match.group(0))
            return f"⟦{len(keeps)}⟧"
        text = "\n".join(KEPT.sub(masked, body) if self.markdown else body for body in bodies)
        source = "\n".join(bodies)  # as read: the ⟦n⟧ above are ours, never read back out of `text`
        index = len(self.sections)
        self.sections.append(Section(index, text, source))
        self.shapes[index] = Shape(tuple(prefixes), tuple(keeps), suffix)
        self.pieces.append(index)

    def kept(self, section: Section, answer: str) -> bool:
        count = len(self.shapes[section.index].keeps)
        return slots(answer, count) == sorted(str(n) for n in range(1, count + 1))

    def fell_back(self, section: Section, answer: str) -> str:
        return answer  # never asked: a Markdown section has no fallback

    def render(self, index: int, results: Mapping[int, Result], lang: str) -> str:
        shape, section = self.shapes[index], self.sections[index]
        done = translation(results, index)
        text = put_back(done, shape.keeps) if done is not None else section.source
        lines = [line for line in text.split("\n") if line.strip()] or [""]
        if len(shape.prefixes) == 1 and len(lines) > 1:
            lines = [" ".join(line.strip() for line in lines)]  # a heading or a cell stays one line
        note = mark(results.get(index), lang) if done is None else None
        if note is not None and self.markdown:
            lines[-1] += " " + comment(note)
        body = self.newline.join(self._prefix(shape, i) + line for i, line in enumerate(lines))
        if note is not None and not self.markdown:
            body = "⚠ " + note + self.newline + body
        return body + shape.suffix

    @staticmethod
    def _prefix(shape: Shape, i: int) -> str:
        if i < len(shape.prefixes):
            return shape.prefixes[i]
        last = shape.prefixes[-1]
        return last if len(shape.prefixes) > 1 else " " * len(last)

    def write(self, results: Mapping[int, Result], path: Path, lang: str) -> list[Said]:
        out = "".join(p if isinstance(p, str) else self.render(p, results, lang) for p in self.pieces)
        path.write_bytes(out.encode("utf-8"))
        return []


def slots(answer: str, count: int) -> list[str]:
    """The numbers of the ⟦n⟧ in a model's `answer` that stand for one of a section's `count`
    kept pieces, sorted as text; any other ⟦n⟧ is the document's own text."""
    names = {str(n) for n in range(1, count + 1)}
    return sorted(m.group(1) for m in SLOT.finditer(answer) if m.group(1) in names)


def put_back(answer: str, keeps: tuple[str, ...]) -> str:
    """A model's `answer` with each of its ⟦n⟧ slots (n in 1..len(keeps)) the piece it stands for."""
    names = {str(n) for n in range(1, len(keeps) + 1)}
    return SLOT.sub(lambda m: keeps[int(m.group(1)) - 1] if m.group(1) in names else m.group(0), answer)


def read_text_layout(path: Path, markdown: bool) -> TextLayout:
    encoding = detect_encoding(path, path.name, DocumentError, "advice_text_utf8")
    text = path.read_bytes().decode(encoding).removeprefix("\ufeff")
    if "\0" in text:
        raise DocumentError(key="doc_not_text", name=path.name)
    layout = TextLayout(markdown, "\r\n" if "\r\n" in text else "\n")
    if encoding.replace("-", "").lower() not in ("utf8", "ascii", "utf_8"):
        layout.notes.append(said("doc_tr_utf8", encoding=encoding))
    lines = text.splitlines(keepends=True)
    block: list[str] = []
    raw_html = 0
    for line, kind in line_kinds(lines, markdown):
        if kind == "text":
            block.append(line)
            continue
        if block:
            cut_block(layout, block)
            block = []
        layout.pieces.append(line)
        raw_html += kind == "html"
    if block:
        cut_block(layout, block)
    if raw_html:
        layout.notes.append(said("doc_tr_md_html", count=raw_html))
    if not layout.sections:
        raise DocumentError(key="doc_blank_lines", name=path.name)
    return layout


def line_kinds(lines: list[str], markdown: bool) -> list[tuple[str, str]]:
    """Each line as "text" (a section's) or what it is kept as: "blank", "code", "html", "kept"."""
    kinds: list[tuple[str, str]] = []
    fence: str | None = None
    front = markdown and bool(lines) and lines[0].strip() == "---"
    after_blank = True
    for n, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        if front:
            kinds.append((line, "kept"))
            front = not (n > 0 and bare.strip() in ("---", "..."))
            continue
        if fence is not None:
            kinds.append((line, "code"))
            if bare.strip().startswith(fence):
                fence = None
            continue
        if not bare.strip():
            kinds.append((line, "blank"))
            after_blank = True
            continue
        opened = FENCE.match(bare) if markdown else None
        if opened:
            fence = opened.group(1)
            kinds.append((line, "code"))
        elif markdown and after_blank and (bare.startswith("    ") or bare.startswith("\t")) \
                and not (kinds and kinds[-1][1] == "text"):
            kinds.append((line, "code"))
            continue  # an indented block stays code until a blank line and a less indented one
        elif markdown and (RULE.match(bare) or REFERENCE.match(bare) or SEPARATOR.match(bare)):
            kinds.append((line, "kept"))
        elif markdown and RAW_HTML.match(bare):
            kinds.append((line, "html"))
        else:
            kinds.append((line, "text"))
        after_blank = False
    return kinds


def cut_block(layout: TextLayout, block: list[str]) -> None:
    """A run of text lines: table rows cell by cell, else items that begin at a marker."""
    ending = block[-1][len(block[-1].rstrip("\r\n")):]
    bare = [line.rstrip("\r\n") for line in block]
    if layout.markdown and all("|" in line for line in bare) and any(
            line.lstrip().startswith("|") for line in bare):
        for line, raw in zip(bare, block, strict=True):
            cut_row(layout, line)
            layout.pieces.append(raw[len(line):])
        return
    prefixes: list[str] = []
    bodies: list[str] = []
    for line in bare:
        prefix = MARKER.match(line).group(0) if layout.markdown else INDENT.match(line).group(0)  # type: ignore[union-attr]
        after_heading = bool(prefixes) and "#" in prefixes[0]  # a heading is one line
        if layout.markdown and prefixes and not prefix.strip() and not after_heading:
            prefix = INDENT.match(line).group(0)  # type: ignore[union-attr]
        elif layout.markdown and prefixes and (prefix.strip() or after_heading):
            layout.add(prefixes, bodies)
            layout.pieces.append(layout.newline)
            prefixes, bodies = [], []
        prefixes.append(prefix)
        bodies.append(line[len(prefix):])
    layout.add(prefixes, bodies)
    layout.pieces.append(ending)


def cut_row(layout: TextLayout, line: str) -> None:
    """One table row: every cell with text is a section, its pipes and padding kept."""
    cells = re.split(r"(?<!\\)\|", line)
    for n, cell in enumerate(cells):
        if n:
            layout.pieces.append("|")
        body = cell.strip()
        if not body:
            layout.pieces.append(cell)
            continue
        lead = cell[:len(cell) - len(cell.lstrip())]
        layout.add([lead], [body], cell[len(lead) + len(body):])
