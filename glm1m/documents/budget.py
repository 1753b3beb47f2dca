"""How a document sits in the served context: its exact token count (the server's /tokenize),
which strategies can read it, and how long a whole-document read is expected to take."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from glm1m.catalog import Said, said
from glm1m.documents.limits import PIECE_CHARS, check_tokens, pieces
from glm1m.documents.pages import DocumentText, Kind
from glm1m.errors import DocumentError
from glm1m.llm import Llm
from glm1m.progress import OnProgress, Progress, Stage, ignore, unit_said

TOKENIZE_PAGES_PER_CALL = 64
PROMPT_OVERHEAD_TOKENS = 256  # system prompt, question and chat template around the document


class Strategy(str, Enum):
    WHOLE = "whole"
    MAP_REDUCE = "map-reduce"
    LOOK_UP = "look-up"  # the model finds and reads locations with tools (lookup.py)


@dataclass(frozen=True)
class Budget:
    """A document measured once. What fits depends on the answer length asked for each time
    (the UI's slider goes to 8,192 tokens), so the methods take it."""
    pages: int
    tokens: int
    chars: int
    max_model_len: int
    threshold: int  # up to this many tokens, whole is the default without asking
    unit: str = "pages"  # what `pages` counts: "pages", or "sections" of a reflowing document

    @property
    def fraction(self) -> float:
        return self.tokens / self.max_model_len

    def fits_whole(self, answer_tokens: int) -> bool:
        return self.tokens + PROMPT_OVERHEAD_TOKENS + answer_tokens <= self.max_model_len

    def default(self, answer_tokens: int) -> Strategy:
        whole = self.fits_whole(answer_tokens) and self.tokens <= self.threshold
        return Strategy.WHOLE if whole else Strategy.MAP_REDUCE

    def offered(self, answer_tokens: int) -> list[Strategy]:
        """Looking things up reads any length; the page offers it where it asks at all (past the
        threshold, where whole costs minutes and reads less well: RULER's 64K effective context)."""
        if self.fits_whole(answer_tokens):
            return [Strategy.WHOLE, Strategy.MAP_REDUCE, Strategy.LOOK_UP]
        return [Strategy.MAP_REDUCE, Strategy.LOOK_UP]

    def check(self, strategy: Strategy, answer_tokens: int) -> None:
        """Raise DocumentError when `strategy` cannot read this document with that answer."""
        if strategy not in self.offered(answer_tokens):
            raise DocumentError(key="doc_too_long_whole", tokens=self.tokens,
                                max=self.max_model_len, answer=answer_tokens)


def budget_said(budget: Budget, documents: Sequence[DocumentText] = ()) -> Said:
    """"6 pages, 12,345 tokens — 1.2% of the served 1,048,576-token context." by id, for a door
    to say in its language; several `documents` asked together (`budget`: their set's text
    measured): "3 documents, 40 pages and 372 sections, 301,227 tokens — 36.8% of the served …"."""
    held = counted(budget.pages, budget.unit)
    if len(documents) > 1:
        units = [counted(n, kind.unit) for kind in (Kind.PAGE, Kind.SECTION)
                 if (n := sum(len(d.pages) for d in documents if d.kind is kind))]
        both = said("cli_both", one=units[0], other=units[1]) if len(units) == 2 else (
            units[0] if units else said("cli_no_pages"))
        held = said("cli_set_held", count=len(documents), held=both)
    return said("cli_budget", held=held, tokens=budget.tokens, fraction=budget.fraction,
                context=budget.max_model_len)


def counted(n: int, unit: str) -> Said:
    """"6 pages", "1 section", "6 页"."""
    return said("counted", count=n, unit=unit_said(unit, n))


async def measure(doc: DocumentText, llm: Llm, threshold: int,
                  on_progress: OnProgress = ignore, max_tokens: int | None = None) -> Budget:
    """Count the document's tokens with the server's own tokenizer, a batch of pages (or
    sections) per call, each call at most limits.PIECE_CHARS characters (a longer page is cut
    for it). Raises LimitReached once the count passes `max_tokens` (None: counts it all)."""
    pages = [f"{page.marked()}\n\n" for page in doc.pages]
    chars = sum(len(p) for p in pages)
    # A location longer than a piece (a 60 MB text without headings is one section) is counted
    # in many calls: then the line counts characters, which move with each call, where "0 of 1
    # sections" stood still for minutes.
    by_chars = any(len(p) > PIECE_CHARS for p in pages)
    tokens = counted_chars = 0
    for piece, done in pieces(pages, most_texts=TOKENIZE_PAGES_PER_CALL):
        tokens += await llm.count_text_tokens(piece)
        counted_chars += len(piece)
        if max_tokens is not None:
            check_tokens(tokens, doc.name, max_tokens, counted_chars, chars)
        on_progress(Progress(Stage.COUNTING, counted_chars, chars, unit="characters") if by_chars
                    else Progress(Stage.COUNTING, done, len(pages), unit=doc.kind.unit))
    return Budget(pages=len(doc.pages), tokens=tokens, chars=chars,
                  max_model_len=await llm.max_model_len(), threshold=threshold, unit=doc.kind.unit)
