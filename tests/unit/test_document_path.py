"""One path opens and asks a document for both doors (documents/asking.py): read once through the
shelf, counted, the strategy chosen by the door, each answer with one heartbeat until its first
piece. A recording door stands in for the page and the CLI; the model is scripted."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from glm1m.documents.answer import OpenDocument
from glm1m.documents.asking import Asked, Door, Opened, ask, open_file
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import Shelf, ShelfFull, Shelved
from glm1m.errors import DocumentError
from glm1m.llm import ChatParams
from glm1m.progress import Progress, Stage
from glm1m.serving import PrefillClock
from glm1m.settings import Settings
from tests.support.pdfs import make_pdf, words_page
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.0, max_tokens=64)
QUESTION = "What is due?"
URL = "http://gpu-1:8000/v1"


class Recording(Door):
    """What a door is told, in order; it chooses `strategy` (else the budget's default) and, once
    it has ticked `release_after` times while waiting, lets the scripted server answer."""
    tick_s = 0.01

    def __init__(self, strategy: Strategy | None = None, release_after: int = 0,
                 llm: ScriptedLlm | None = None) -> None:
        self.strategy = strategy
        self.said: list[tuple] = []
        self.progress_threads: set[int] = set()
        self.ticks: list[float] = []
        self.ticked = asyncio.Event()
        self.release_after, self.llm = release_after, llm

    def progress(self, progress: Progress) -> None:
        self.progress_threads.add(threading.get_ident())
        if not self.said or self.said[-1] != ("progress", progress.stage):
            self.said.append(("progress", progress.stage))

    async def reading(self, name: str) -> None:
        self.said.append(("reading", name))

    async def read(self, shelved: Shelved, full: ShelfFull | None) -> None:
        self.said.append(("read", shelved.text.name, shelved.hit))

    async def choose(self, name: str, budget: Budget, answer_tokens: int, before: float | None
                     ) -> Strategy:
        self.said.append(("choose", name, before is not None))
        return self.strategy or budget.default(answer_tokens)

    async def asking(self, asked: Asked) -> None:
        self.said.append(("asking", asked.first, asked.again))

    async def waiting(self, asked: Asked, elapsed_s: float) -> None:
        self.ticks.append(elapsed_s)
        self.ticked.set()
        if self.said[-1] != ("waiting",):
            self.said.append(("waiting",))
        if self.llm is not None and len(self.ticks) >= self.release_after:
            self.llm.release_all()

    async def answering(self, asked: Asked, elapsed_s: float) -> None:
        self.said.append(("answering", elapsed_s >= max(self.ticks, default=0.0)))


def held(text: str) -> bool:
    """The whole-document prompt of QUESTION: the scripted server "reads" it until released."""
    return text.endswith(f"Question: {QUESTION}")


def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", base_url=URL, whole_document_threshold=100_000,
                    map_chunk_tokens=256, map_concurrency=2, map_note_tokens=32)


def lease(path: Path, facts: int = 40) -> Path:
    path.write_text("# Terms\n\n" + " ".join(f"Rent fact {i} is due monthly." for i in range(facts)) +
                    "\n\n# Notice\n\nThree months.\n", encoding="utf-8")
    return path


async def opened(path: Path, name: str, tmp_path: Path, llm: ScriptedLlm, door: Door) -> Opened:
    shelf = Shelf.of(tmp_path / "data", 100)
    return await open_file(path, name, shelf, ReadOptions(), llm, settings(tmp_path), PARAMS.max_tokens,
                           door)


async def answered(doc: OpenDocument, llm: ScriptedLlm, door: Door, clock: PrefillClock | None = None,
                   opened_with: Opened | None = None) -> str:
    to = opened_with.to if opened_with is not None else None
    return "".join([p async for p in ask(doc, QUESTION, llm, PARAMS, door, clock, to)])


async def test_a_file_is_read_once_then_found_on_the_shelf_and_the_door_is_told_each_step(
        tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "lease.pdf", [words_page(n, 120) for n in range(1, 4)])
    llm = ScriptedLlm()
    door = Recording()
    first = await opened(pdf, "lease.pdf", tmp_path, llm, door)
    assert first.doc.strategy is Strategy.WHOLE and not first.shelved.hit
    assert door.said == [("reading", "lease.pdf"), ("progress", Stage.READING), ("read", "lease.pdf", False),
                         ("progress", Stage.COUNTING), ("choose", "lease.pdf", False)]
    # The pages were read in a worker thread; the door heard of them on the event loop's.
    assert door.progress_threads == {threading.get_ident()}
    assert await answered(first.doc, llm, door, opened_with=first)
    assert door.said[-2:] == [("asking", True, False), ("answering", True)]

    again = Recording()
    copy = await opened(pdf, "Copy of lease.pdf", tmp_path, llm, again)
    # Neither read nor counted again; the server that answered it whole is said to have read it.
    assert again.said == [("read", "Copy of lease.pdf", True), ("choose", "Copy of lease.pdf", True)]
    assert copy.doc.text.pages == first.doc.text.pages and copy.doc.budget == first.doc.budget
    await answered(copy.doc, llm, again, opened_with=copy)
    assert ("asking", True, True) in again.said


async def test_the_door_chooses_the_strategy_and_a_choice_that_cannot_read_it_is_refused(
        tmp_path: Path) -> None:
    path = lease(tmp_path / "lease.md", facts=400)  # about 3,000 tokens
    doc = (await opened(path, "lease.md", tmp_path, ScriptedLlm(), Recording(Strategy.MAP_REDUCE))).doc
    assert doc.strategy is Strategy.MAP_REDUCE
    with pytest.raises(DocumentError, match="cannot be read whole"):
        await opened(path, "lease.md", tmp_path, ScriptedLlm(context=2_000), Recording(Strategy.WHOLE))


async def test_the_wait_ticks_until_the_first_piece_and_teaches_the_clock_only_a_first_whole_read(
        tmp_path: Path) -> None:
    path = lease(tmp_path / "lease.md", facts=700)  # over 4,000 tokens: a read that says something of speed
    llm = ScriptedLlm()
    first = await opened(path, "lease.md", tmp_path, llm, Recording())
    llm.hold = held
    clock = PrefillClock(None)
    door = Recording(release_after=3, llm=llm)
    assert await answered(first.doc, llm, door, clock, opened_with=first) == llm.reply(llm.calls[-1].messages)
    assert len(door.ticks) >= 3 and door.ticks == sorted(door.ticks)
    assert door.said == [("asking", True, False), ("waiting",), ("answering", True)]  # no tick after it
    assert len(clock.observed) == 1

    follow_up = Recording()
    await answered(first.doc, llm, follow_up, clock)  # this server has it: says nothing of speed
    assert follow_up.said[0] == ("asking", False, True)
    revisit = await opened(path, "Copy of lease.md", tmp_path, llm, Recording())
    await answered(revisit.doc, llm, Recording(), clock, opened_with=revisit)
    assert len(clock.observed) == 1


async def test_a_question_stopped_before_its_first_piece_ends_the_models_stream_and_notes_nothing(
        tmp_path: Path) -> None:
    path = lease(tmp_path / "lease.md")
    llm = ScriptedLlm(hold=held)
    first = await opened(path, "lease.md", tmp_path, llm, Recording())
    door = Recording()
    reading = asyncio.create_task(answered(first.doc, llm, door, PrefillClock(None), opened_with=first))
    await door.ticked.wait()  # the heartbeat runs while the server reads
    reading.cancel()  # the stop button
    with pytest.raises(asyncio.CancelledError):
        await reading
    assert llm.in_flight == 0 and llm.calls[-1].outcome == "cancelled"
    assert not any(said[0] == "answering" for said in door.said)
    # A read stopped before its answer is not one the server may still hold.
    again = Recording()
    await opened(path, "lease.md", tmp_path, llm, again)
    assert again.said[-1] == ("choose", "lease.md", False)
