"""`Section`, what one request translates, and `Layout`, the interface every document format
implements: its sections, what it cannot keep, whether an answer kept a section's structure, and
the output written from the finished sections (the rest kept in the original and marked)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from glm1m.catalog import Said, render
from glm1m.translation.fanout import Result


@dataclass(frozen=True)
class Section:
    index: int
    text: str  # as the model is asked to translate it (HTML: the block's inner HTML, tags kept)
    source: str  # its human text alone: the document part of the prompt, the glossary's counts
    # Asked instead when the answer to `text` did not keep its structure (HTML: the block's text
    # without its inline tags); None: such an answer fails the section.
    fallback: str | None = None


class Layout(Protocol):
    """A document cut into sections, able to write itself back with their translations."""
    sections: list[Section]
    notes: list[Said]  # what this format cannot keep in this document, said once each

    def kept(self, section: Section, answer: str) -> bool:
        """Whether `answer` keeps what `section.text` must keep (tags, links, code)."""
        ...

    def fell_back(self, section: Section, answer: str) -> str:
        """What is stored for `section` when its `fallback` text was translated as `answer`."""
        ...

    def write(self, results: Mapping[int, Result], path: Path, lang: str) -> list[Said]:
        """The document with each translated section in place and every other one kept in the
        original and marked; returns what writing it could not keep (lost inline formatting)."""
        ...


def mark(result: Result | None, lang: str) -> str:
    """"glm1m: not translated: <why>", in `lang`, for a section that failed or was not reached."""
    reason = result.error if result is not None and result.error else render(lang, "doc_tr_not_reached")
    return render(lang, "doc_tr_marker", reason=reason)


def comment(text: str) -> str:
    """`text` as an HTML comment (Markdown and HTML): "--" may not stand inside one."""
    return "<!-- " + text.replace("--", "- -") + " -->"


def translation(results: Mapping[int, Result], index: int) -> str | None:
    result = results.get(index)
    return result.translation if result is not None and result.error is None else None
