"""Questions about a document, against a scripted model client: the whole-document prompt, the
map-reduce requests and their order, progress, and the token budget."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from glm1m.documents.answer import OpenDocument, answer, document_key, open_document, whole_prompt
from glm1m.documents.budget import (
    PROMPT_OVERHEAD_TOKENS,
    TOKENIZE_PAGES_PER_CALL,
    Budget,
    Strategy,
    measure,
)
from glm1m.documents.pages import DocumentText, Page
from glm1m.errors import DocumentError
from glm1m.llm import ChatParams, Message
from glm1m.progress import Progress, Stage
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm, user_text

# Held calls wait on events: a bug that loses a release would hang, so fail fast instead.
pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.3, max_tokens=512)


def document(pages: int, sentences: int = 20) -> DocumentText:
    texts = (" ".join(f"Fact {j} of page {p}." for j in range(sentences)) for p in range(1, pages + 1))
    return DocumentText("report.pdf", tuple(Page(n, t) for n, t in enumerate(texts, start=1)), pages)


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(data_dir=tmp_path, whole_document_threshold=100_000,
                                  map_chunk_tokens=256, map_concurrency=3, map_note_tokens=64)
    return Settings(**(values | overrides))


def notes_reply(messages: list[Message]) -> str:
    """A note names its part; the combined answer says how many notes it was given."""
    text = user_text(messages)
    if part := re.search(r"one part \((.+?)\)", text):
        return f"  note on {part.group(1)}  "
    return f"answer from {text.count('Notes on ')} notes"


async def streamed(doc: OpenDocument, question: str, llm: ScriptedLlm, params: ChatParams = PARAMS,
                   on_progress: Callable[[Progress], None] = lambda p: None) -> str:
    return "".join([piece async for piece in answer(doc, question, llm, params, on_progress)])


async def test_whole_document_goes_first_and_the_question_last(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "It says so [p. 2].")
    doc = await open_document(document(3), llm, settings(tmp_path), PARAMS.max_tokens)
    assert doc.strategy is Strategy.WHOLE
    assert await streamed(doc, "What is fact 3?", llm) == "It says so [p. 2]."
    assert await streamed(doc, "And fact 4?", llm) == "It says so [p. 2]."
    first, second = (c.messages for c in llm.calls)
    assert [c.kind for c in llm.calls] == ["stream", "stream"]
    assert first[0] == second[0] and first[0]["role"] == "system"
    one, two = first[-1]["content"], second[-1]["content"]
    assert one.endswith("Question: What is fact 3?") and two.endswith("Question: And fact 4?")
    shared = one.removesuffix("What is fact 3?")
    assert two.startswith(shared)  # vLLM's prefix cache serves the whole document to the follow-up
    assert doc.text.marked_text() in shared and shared.index("[p. 1]") < shared.index("Question:")
    assert first == whole_prompt(doc.text, "What is fact 3?")
    # One router key for both questions: the document's, not each prompt's opening (answer.py).
    assert [c.params for c in llm.calls] == [replace(PARAMS, session=document_key(doc))] * 2


def found(pattern: str, text: str) -> str:
    match = re.search(pattern, text, re.S)
    assert match is not None, f"{pattern!r} not in {text[:200]!r}"
    return match.group(1)


def is_note(text: str) -> bool:
    return "one part (" in text


async def test_map_reduce_takes_notes_per_part_then_combines_them_in_page_order(tmp_path: Path) -> None:
    # The first part's note is held until every other note is in: the notes must still reach
    # the combining prompt in page order.
    llm = ScriptedLlm(reply=notes_reply, hold=lambda text: is_note(text) and "[p. 1]\n" in text)
    doc = await open_document(document(12), llm, settings(tmp_path), PARAMS.max_tokens,
                              strategy=Strategy.MAP_REDUCE)
    progress: list[Progress] = []
    all_but_one = asyncio.Event()

    def on_progress(p: Progress) -> None:
        progress.append(p)
        if p.stage is Stage.READING and p.total > 1 and p.done == p.total - 1:
            all_but_one.set()

    task = asyncio.create_task(streamed(doc, "List the facts.", llm, on_progress=on_progress))
    await all_but_one.wait()
    assert llm.outcomes("running") and "[p. 1]\n" in llm.outcomes("running")[0]
    llm.release_all()
    text = await task

    notes = [c for c in llm.calls if is_note(c.text)]
    parts = len(notes)
    assert parts > 3 and {c.kind for c in notes} == {"complete"}
    assert llm.max_in_flight <= 3  # map_concurrency
    assert all("List the facts." in c.text for c in notes)
    assert {(c.params.max_tokens, c.params.temperature) for c in notes} == {(64, 0.2)}
    # Every part of the document went to exactly one note request.
    noted = "".join(found(r"<part>\n(.*)\n</part>", c.text) for c in notes)
    assert re.sub(r"\s", "", noted) == re.sub(r"\s", "", doc.text.marked_text())

    combine = llm.calls[-1]
    # The final prompt is one-shot too: it keeps nothing in a host KV tier (issue 27).
    assert (combine.kind, combine.params) == ("stream", replace(PARAMS, one_shot=True))
    assert len(llm.calls) == parts + 1
    blocks = re.findall(r"Notes on (pp?\. [\d–]+):\n(.*)", combine.text)
    assert len(blocks) == parts
    assert [pages for pages, _ in blocks] == [note.removeprefix("note on ") for _, note in blocks]
    first_pages = [int(found(r"(\d+)", pages)) for pages, _ in blocks]
    assert first_pages == sorted(first_pages) and first_pages[0] == 1
    assert text == f"answer from {parts} notes"

    assert [p.stage for p in progress] == [Stage.READING] * (parts + 1) + [Stage.COMBINING]
    assert [p.done for p in progress[:-1]] == list(range(parts + 1))
    assert {(p.total, p.unit) for p in progress} == {(parts, "parts")}


async def test_the_default_strategy_follows_the_threshold(tmp_path: Path) -> None:
    llm = ScriptedLlm(context=100_000)
    small = await open_document(document(2), llm, settings(tmp_path, whole_document_threshold=5_000), 512)
    big = await open_document(document(80), llm, settings(tmp_path, whole_document_threshold=5_000), 512)
    assert (small.strategy, big.strategy) == (Strategy.WHOLE, Strategy.MAP_REDUCE)
    assert big.budget.tokens > 5_000 and big.budget.fits_whole(512)
    assert big.budget.offered(512) == [Strategy.WHOLE, Strategy.MAP_REDUCE, Strategy.LOOK_UP]


def test_whole_is_refused_when_the_answer_length_leaves_no_room() -> None:
    budget = Budget(pages=10, tokens=7_000, chars=28_000, max_model_len=8_192, threshold=100_000)
    budget.check(Strategy.WHOLE, 512)  # 7,000 + 256 + 512 fits
    with pytest.raises(DocumentError, match="cannot be read whole; use map-reduce"):
        budget.check(Strategy.WHOLE, 8_192)
    budget.check(Strategy.MAP_REDUCE, 8_192)
    assert budget.offered(8_192) == [Strategy.MAP_REDUCE, Strategy.LOOK_UP]
    assert budget.default(8_192) is Strategy.MAP_REDUCE
    edge = 8_192 - 7_000 - PROMPT_OVERHEAD_TOKENS
    assert budget.fits_whole(edge) and not budget.fits_whole(edge + 1)


async def test_a_whole_document_answer_is_shortened_to_the_room_left(tmp_path: Path) -> None:
    context = 8_192
    llm = ScriptedLlm(context=context)
    doc = await open_document(document(40), llm, settings(tmp_path), 512, strategy=Strategy.WHOLE)
    assert doc.budget.fits_whole(512) and not doc.budget.fits_whole(8_192)
    await streamed(doc, "Summarise.", llm, ChatParams(temperature=0.3, max_tokens=8_192))
    await streamed(doc, "Summarise.", llm, ChatParams(temperature=0.3, max_tokens=512))
    long, short = llm.calls
    assert 512 < long.params.max_tokens < 8_192
    assert await llm.count_chat_tokens(long.messages) + long.params.max_tokens <= context
    assert short.params.max_tokens == 512  # an answer that fits is not touched


async def test_a_question_that_leaves_no_room_for_an_answer_sends_nothing(tmp_path: Path) -> None:
    llm = ScriptedLlm(context=4_500)
    doc = await open_document(document(40), llm, settings(tmp_path), 16, strategy=Strategy.WHOLE)
    with pytest.raises(DocumentError, match="leaves no room for an answer"):
        await streamed(doc, "Why? " * 400, llm)
    assert llm.calls == []


async def test_opening_a_document_too_long_to_read_whole_is_refused(tmp_path: Path) -> None:
    llm = ScriptedLlm(context=2_000)
    with pytest.raises(DocumentError, match="cannot be read whole"):
        await open_document(document(20), llm, settings(tmp_path), 512, strategy=Strategy.WHOLE)


async def test_every_note_prompt_fits_a_small_context(tmp_path: Path) -> None:
    # Chunks wanted at 32,000 tokens must shrink to what a 1,000-token context holds beside the
    # instructions and the notes, or the server would refuse every part.
    context, note_tokens = 1_000, 200
    llm = ScriptedLlm(context=context, reply=notes_reply)
    doc = await open_document(document(60), llm, settings(tmp_path, map_chunk_tokens=32_000,
                                                              map_note_tokens=note_tokens), 256)
    assert doc.strategy is Strategy.MAP_REDUCE
    await streamed(doc, "Summarise.", llm, ChatParams(temperature=0.3, max_tokens=256))
    notes = [c for c in llm.calls if is_note(c.text)]
    assert len(notes) > 5
    for call in [*notes, llm.calls[-1]]:  # the combining prompt too
        assert await llm.count_chat_tokens(call.messages) + call.params.max_tokens <= context


async def test_measure_counts_pages_in_batches_and_reports_progress() -> None:
    pages = 2 * TOKENIZE_PAGES_PER_CALL + 3
    doc = document(pages, sentences=2)
    llm = ScriptedLlm(context=50_000)
    progress: list[Progress] = []
    budget = await measure(doc, llm, threshold=10_000, on_progress=progress.append)
    assert len(llm.counted) == 3
    assert "".join(llm.counted) == "".join(f"{p.marked()}\n\n" for p in doc.pages)
    assert llm.counted[0].startswith("[p. 1]\n") and llm.counted[2].startswith(f"[p. {pages - 2}]\n")
    assert budget.tokens == sum(llm.count(text) for text in llm.counted)
    assert (budget.pages, budget.max_model_len, budget.threshold) == (pages, 50_000, 10_000)
    assert budget.chars == sum(len(text) for text in llm.counted)
    assert [(p.stage, p.done, p.total, p.unit) for p in progress] == [
        (Stage.COUNTING, 64, pages, "pages"), (Stage.COUNTING, 128, pages, "pages"),
        (Stage.COUNTING, pages, pages, "pages")]
