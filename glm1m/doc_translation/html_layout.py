"""HTML cut into sections at its block elements and written back with every byte outside them
as it was (tags, attributes, links, images, scripts, comments).

A section is the run of inline content inside one of the blocks a reader reads as text (p, h1-h6,
li, td, th, caption, figcaption, blockquote, dt, dd, title) between any two block tags, so a list
item that holds a nested list is two sections and the nested list stays as it was. A run without
inline tags is sent as its text and put back escaped; a run with them (<a>, <b>, <code>, ...) is
sent as its inner HTML with the instruction to keep every tag, and the answer must hand back the
same tags in the same order, attributes included. When it does not, the run's text alone is asked
and put back without its inline tags, and the number of such blocks is said. Text outside those
blocks (directly in a div or the body) and <pre>, <script>, <style> stay untranslated, said as a
count. html.parser of the standard library: no dependency for one reader.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from glm1m.catalog import Said, said
from glm1m.doc_translation.sections import Section, comment, mark, translation
from glm1m.encoding import html_as_utf8
from glm1m.errors import DocumentError
from glm1m.translation.fanout import Result

TRANSLATED = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "th", "caption", "figcaption",
              "blockquote", "dt", "dd", "title"}
OPAQUE = {"pre", "script", "style", "textarea", "template", "svg", "math"}
BLOCKS = TRANSLATED | OPAQUE | {
    "html", "head", "body", "div", "ul", "ol", "dl", "table", "thead", "tbody", "tfoot", "tr",
    "colgroup", "section", "article", "header", "footer", "nav", "aside", "main", "figure", "form",
    "fieldset", "legend", "hr", "address", "details", "summary", "hgroup", "menu", "center",
    "noscript", "select", "option", "iframe", "object", "meta", "link", "base"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
TAG = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    markup: bool


@dataclass
class HtmlLayout:
    page: str
    sections: list[Section] = field(default_factory=list)
    spans: list[Span] = field(default_factory=list)
    notes: list[Said] = field(default_factory=list)
    outside: int = 0  # runs of text outside the blocks translated, kept as they are

    def kept(self, section: Section, answer: str) -> bool:
        if section.fallback is None:
            return True
        return tags(answer) == tags(section.text)

    def fell_back(self, section: Section, answer: str) -> str:
        return html.escape(answer.strip(), quote=False)

    def write(self, results: Mapping[int, Result], path: Path, lang: str) -> list[Said]:
        page, lost = self.rendered(results, lang)
        path.write_bytes(page.encode("utf-8"))
        return [said("doc_tr_html_tags_lost", count=lost)] if lost else []

    def rendered(self, results: Mapping[int, Result], lang: str) -> tuple[str, int]:
        """The page with its sections translated or marked, and how many lost inline tags."""
        out, at, lost = [], 0, 0
        for section, span in zip(self.sections, self.spans, strict=True):
            out.append(self.page[at:span.start])
            done = translation(results, section.index)
            if done is None:
                out.append(comment(mark(results.get(section.index), lang)) + self.page[span.start:span.end])
            elif span.markup:
                out.append(done)
                lost += tags(done) != tags(section.text)
            else:
                out.append(html.escape(done.strip(), quote=False))
            at = span.end
        out.append(self.page[at:])
        return "".join(out), lost


def tags(text: str) -> list[str]:
    """The tags of a run in order, each with its attributes, spaces inside it evened out."""
    return [" ".join(tag.split()) for tag in TAG.findall(text)]


class Runs(HTMLParser):
    """Finds the runs of inline content and where each begins and ends in the page."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", page)]
        self.open: list[str] = []
        self.run_start: int | None = 0
        self.run_text = self.run_markup = False
        self.runs: list[Span] = []
        self.outside = 0  # runs of text no translated block holds

    def at(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def close_run(self, end: int, next_start: int) -> None:
        if self.run_start is not None and self.run_text:
            if OPAQUE & set(self.open):
                pass  # code and scripts are not text to translate, by intent
            elif TRANSLATED & set(self.open):
                self.runs.append(Span(self.run_start, end, self.run_markup))
            else:
                self.outside += 1
        self.run_start, self.run_text, self.run_markup = next_start, False, False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self.at()
        raw = self.get_starttag_text() or ""
        if tag in BLOCKS:
            self.close_run(start, start + len(raw))
            if tag not in VOID:
                self.open.append(tag)
        else:
            self.run_markup = True

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self.at()
        if tag in BLOCKS:
            self.close_run(start, start + len(self.get_starttag_text() or ""))
        else:
            self.run_markup = True

    def handle_endtag(self, tag: str) -> None:
        start = self.at()
        if tag in BLOCKS:
            self.close_run(start, self.page.find(">", start) + 1)
            if tag in self.open:
                while self.open.pop() != tag:
                    pass
        else:
            self.run_markup = True

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.run_text = True

    def handle_comment(self, data: str) -> None:
        self.run_markup = True

    def handle_decl(self, decl: str) -> None:
        self.run_start = self.page.find(">", self.at()) + 1


def read_html_layout(path: Path) -> HtmlLayout:
    layout = html_layout_of(html_as_utf8(path, path.name, DocumentError).decode("utf-8-sig"))
    if not layout.sections:
        raise DocumentError(key="doc_tr_nothing", name=path.name)
    return layout


def html_layout_of(page: str) -> HtmlLayout:
    """A page cut into sections (none when it holds no text to translate): an HTML file, or one
    XHTML chapter of an EPUB (epub_layout.py)."""
    parser = Runs(page)
    parser.feed(page)
    parser.close()
    layout = HtmlLayout(page)
    for span in parser.runs:
        inner = page[span.start:span.end]
        lead = len(inner) - len(inner.lstrip())
        body = inner.strip()
        start = span.start + lead
        plain = " ".join(html.unescape(TAG.sub("", body)).split())
        if not plain:
            continue  # only tags and entities for spaces: nothing to translate
        index = len(layout.sections)
        if span.markup:
            layout.sections.append(Section(index, body, plain, fallback=plain))
        else:
            layout.sections.append(Section(index, plain, plain))
        layout.spans.append(Span(start, start + len(body), span.markup))
    layout.outside = parser.outside
    if parser.outside:
        layout.notes.append(said("doc_tr_html_outside", count=parser.outside))
    return layout
