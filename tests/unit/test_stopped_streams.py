"""A stopped answer ends the model's stream at once, through every wrapper between the stop button
and the HTTP stream. A wrapper that only iterates its source leaves it suspended when closed, and
the garbage collector closes it some time later: the server meanwhile generated the whole stopped
answer into a socket nobody read (a CI run found one arriving during a later test). The garbage
collector is off in these tests, so only an explicit close counts."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from glm1m.chainlit_app.pacing import coalesce
from glm1m.chat import Conversation
from glm1m.documents.answer import answer, open_document
from glm1m.documents.asking import Door, ask, open_file
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.heartbeat import until_first
from glm1m.documents.pages import DocumentText, Page
from glm1m.documents.shelf import Shelf
from glm1m.llm import ChatParams, LlmClient
from glm1m.serving import PrefillClock
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.0, max_tokens=256)
LONG = "a long answer " * 50


@pytest.fixture(autouse=True)
def no_garbage_collector() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def nothing(elapsed_s: float) -> None:
    pass


def document(pages: int) -> DocumentText:
    return DocumentText("report.pdf", tuple(Page(n, f"Fact {n}. " * 40) for n in range(1, pages + 1)), pages)


async def stopped_after_first_piece(pieces: AsyncIterator[str]) -> None:
    assert await anext(pieces)
    await pieces.aclose()  # type: ignore[attr-defined]  # what cancelling the reading task leads to


async def test_a_stopped_chat_turn_closes_the_models_stream() -> None:
    llm = ScriptedLlm(reply=lambda messages: LONG)
    await stopped_after_first_piece(Conversation("Be brief.").reply("hello", llm, PARAMS))
    assert llm.in_flight == 0


@pytest.mark.parametrize("strategy", [Strategy.WHOLE, Strategy.MAP_REDUCE])
async def test_a_stopped_document_answer_closes_the_models_stream(tmp_path: Path, strategy: Strategy) -> None:
    llm = ScriptedLlm(reply=lambda messages: LONG)
    settings = Settings(data_dir=tmp_path, whole_document_threshold=100_000, map_chunk_tokens=256,
                        map_concurrency=2, map_note_tokens=64)
    doc = await open_document(document(6), llm, settings, PARAMS.max_tokens, strategy=strategy)
    await stopped_after_first_piece(answer(doc, "What does it say?", llm, PARAMS))
    assert llm.in_flight == 0
    assert llm.calls[-1].kind == "stream"  # it was the streamed answer that was stopped


@pytest.mark.parametrize("wrap", [
    lambda pieces: coalesce(pieces, 0.0),
    lambda pieces: until_first(pieces, nothing, 60.0, nothing),
], ids=["page pacing", "heartbeat"])
async def test_the_wrappers_close_their_source(wrap: Callable[[AsyncIterator[str]], AsyncIterator[str]]) -> None:
    llm = ScriptedLlm(reply=lambda messages: LONG)
    await stopped_after_first_piece(wrap(llm.stream_chat([{"role": "user", "content": "hi"}], PARAMS)))
    assert llm.in_flight == 0


@pytest.mark.parametrize("strategy", [Strategy.WHOLE, Strategy.MAP_REDUCE])
async def test_a_stopped_question_through_the_doors_path_closes_the_models_stream(
        tmp_path: Path, strategy: Strategy) -> None:
    """documents.asking.ask, what the page and the CLI both stream: shelf note and heartbeat too."""
    (tmp_path / "report.md").write_text("# Facts\n\n" + "Fact 1. " * 400, encoding="utf-8")
    llm = ScriptedLlm(reply=lambda messages: LONG)
    settings = Settings(data_dir=tmp_path, whole_document_threshold=100_000, map_chunk_tokens=256,
                        map_concurrency=2, map_note_tokens=64)

    class Chooses(Door):
        async def choose(self, name: str, budget: Budget, answer_tokens: int, before: float | None
                         ) -> Strategy:
            return strategy

    door = Chooses()
    opened = await open_file(tmp_path / "report.md", "report.md", Shelf.of(tmp_path, 100), ReadOptions(),
                             llm, settings, PARAMS.max_tokens, door)
    await stopped_after_first_piece(ask(opened.doc, "What does it say?", llm, PARAMS, door,
                                        PrefillClock(None), opened.to))
    assert llm.in_flight == 0
    assert llm.calls[-1].kind == "stream"


async def test_a_stop_as_the_next_piece_arrives_is_not_lost() -> None:
    """The stop button cancels the task reading the stream; a piece is often already there when it
    does (vLLM streams fast). Python 3.11's asyncio.wait_for returned that piece and dropped the
    cancel, so the answer ran to its end (143 of 200 readers here ignored the stop)."""
    llm = LlmClient(Settings(base_url="http://127.0.0.1:9/v1"))

    async def endless() -> AsyncIterator[str]:
        while True:
            await asyncio.sleep(0)  # a piece arrives at every turn of the loop
            yield "piece"

    ignored = 0
    for trial in range(100):
        pieces = endless()

        async def reader(source: AsyncIterator[str] = pieces) -> None:
            while True:
                await llm._next_chunk(source)  # type: ignore[arg-type]

        task = asyncio.create_task(reader())
        for _ in range(trial % 7 + 1):  # stop at different moments of the piece's arrival
            await asyncio.sleep(0)
        task.cancel()
        for _ in range(20):
            await asyncio.sleep(0)
        if not task.done():
            ignored += 1
            while not task.done():  # wait_for would swallow this too, when it lands as a piece does
                task.cancel()
                await asyncio.sleep(0.001)
        await pieces.aclose()  # type: ignore[attr-defined]
    await llm.aclose()
    assert ignored == 0, f"{ignored} of 100 stopped readers went on reading"
