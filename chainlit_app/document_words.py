"""How the page names and counts a chat's documents, in its two languages: one document by its
name and its pages ("report.pdf", "6 pages"), several asked together (glm1m/documents/sets.py)
by their letters and names and what they hold ("A (report.pdf) and B (notes.md)", "2 documents,
6 pages and 14 sections"). No Chainlit import, so it is tested without a server."""

from __future__ import annotations

from collections.abc import Sequence

from glm1m.chainlit_app.i18n import count_of, t
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.pages import DocumentText, Kind
from glm1m.documents.sets import DocumentSet


def set_words(lang: str, documents: Sequence[DocumentText]) -> str:
    """"report.pdf"; "A (report.pdf) and B (notes.md)"; "A（report.pdf）和 B（notes.md）"; "" for none."""
    return DocumentSet(tuple(documents)).said(lang)


def held_words(lang: str, budget: Budget, documents: Sequence[DocumentText] = ()) -> str:
    """What the read holds: "6 pages" for one document (its budget's unit); for several, "3
    documents, 40 pages and 372 sections" (a set's budget counts "locations", which say nothing
    a reader can find)."""
    if len(documents) <= 1:
        return count_of(lang, budget.pages, getattr(budget, "unit", "pages"))
    held = [count_of(lang, n, kind.unit) for kind in (Kind.PAGE, Kind.SECTION)
            if (n := sum(len(doc.pages) for doc in documents if doc.kind is kind))]
    return t(lang, "doc_set_held", count=len(documents),
             held=t(lang, "and").join(held) or count_of(lang, budget.pages, budget.unit))


def budget_line(lang: str, budget: Budget, documents: Sequence[DocumentText] = ()) -> str:
    """"3 documents, 412 pages, 301,227 tokens — 36.8% of the served 819,200-token context." """
    return t(lang, "doc_budget", pages=held_words(lang, budget, documents), tokens=budget.tokens,
             fraction=budget.fraction, context=budget.max_model_len)


STRATEGY_WORDS = {Strategy.WHOLE: "whole", Strategy.MAP_REDUCE: "map_reduce", Strategy.LOOK_UP: "look_up"}


def strategy_words(lang: str, strategy: Strategy) -> str:
    return t(lang, STRATEGY_WORDS[strategy])

