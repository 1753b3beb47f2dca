"""Documents asked together that do not fit the served context, read part by part: every part's
prompt carries the letters of its documents, and the notes keep which document said what up to
the answer's citations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glm1m.documents.answer import answer, open_set
from glm1m.documents.budget import Strategy
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import DocumentSet
from glm1m.llm import ChatParams, Message
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm, user_text

pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.3, max_tokens=256)
MARKER = re.compile(r"\[([A-Z]) (p\.|§) (\d+)\]")


def long_document(name: str, locations: int, kind: Kind) -> DocumentText:
    facts = (" ".join(f"{name} fact {j} at {n}." for j in range(12)) for n in range(1, locations + 1))
    return DocumentText(name, tuple(Page(n, t, kind) for n, t in enumerate(facts, start=1)), locations)


DOCUMENTS = DocumentSet((long_document("contract.pdf", 12, Kind.PAGE),
                         long_document("notes.md", 10, Kind.SECTION),
                         long_document("report.pdf", 8, Kind.PAGE)))


def cites_what_it_read(messages: list[Message]) -> str:
    """A model that cites every marker (or citation) it was shown, as the markers are written."""
    text = user_text(messages)
    if "one part (" in text:
        part = re.search(r"<part>\n(.*)\n</part>", text, re.S)
        assert part is not None
        return " ".join(m.group() for m in MARKER.finditer(part.group(1)))
    notes = text.split("Notes on ", 1)[1]
    return "They say: " + " ".join(m.group() for m in MARKER.finditer(notes))


async def test_a_set_too_large_to_read_whole_is_read_part_by_part_with_its_letters(tmp_path: Path) -> None:
    llm = ScriptedLlm(context=2048, reply=cites_what_it_read)
    settings = Settings(data_dir=tmp_path, map_chunk_tokens=400, map_concurrency=2, map_note_tokens=300)
    doc = await open_set(DOCUMENTS, llm, settings, PARAMS.max_tokens)
    assert doc.strategy is Strategy.MAP_REDUCE and not doc.budget.fits_whole(PARAMS.max_tokens)
    said = "".join([piece async for piece in answer(doc, "What do they say?", llm, PARAMS)])

    parts = [call for call in llm.calls if "one part (" in call.text]
    assert len(parts) > 3
    seen: list[tuple[str, str, int]] = []
    for call in parts:
        assert "[A p. N] or [A § N]" in call.messages[0]["content"]  # how to cite a set's locations
        assert "A (contract.pdf), B (notes.md) and C (report.pdf)" in call.text
        part = re.search(r"<part>\n(.*)\n</part>", call.text, re.S)
        assert part is not None
        assert not re.search(r"\[(p\.|§) \d+\]", part.group(1))  # no marker without its letter
        markers = [(m.group(1), m.group(2), int(m.group(3))) for m in MARKER.finditer(part.group(1))]
        # The part is named by its documents' letters: "one part (A 5–9)", "(A 12 – B 2)",
        # ending where its last marker is.
        named = re.search(r"one part \(([A-Z]) (\d+)(?:–(\d+))?(?: – ([A-Z]) (\d+))?\)", call.text)
        assert named is not None, call.text[:120]
        start, *_, end_label, end_number = named.groups()
        ends = (end_label or start, int(end_number or named.group(3) or named.group(2)))
        assert ends == (markers[-1][0], markers[-1][2]) and start <= markers[0][0]
        seen += markers
    expected = [(label, "p." if doc.kind is Kind.PAGE else "§", n)
                for label, doc in zip(DOCUMENTS.labels, DOCUMENTS.documents, strict=True)
                for n in range(1, len(doc.pages) + 1)]
    assert sorted(set(seen)) == sorted(expected)  # every location of every document went to a part

    # The combining prompt names each note by its documents, and each note cites only those.
    combine = llm.calls[-1]
    blocks = re.findall(r"Notes on (.+?):\n(.*)", combine.text)
    assert len(blocks) == len(parts) and any(" – " in header for header, _ in blocks)
    for header, note in blocks:
        assert {m.group(1) for m in MARKER.finditer(note)} <= set(re.findall(r"[A-Z]", header))

    # Each note kept its letters, so the answer names which document said what.
    cited = DOCUMENTS.cited(said)
    assert {(c.label, c.name, c.page.number) for c in cited} == {
        (label, doc.name, n) for label, doc in zip(DOCUMENTS.labels, DOCUMENTS.documents, strict=True)
        for n in range(1, len(doc.pages) + 1)}
    assert "B · notes.md · § 10" in [c.line for c in cited]
