"""Bugs the scripted-client tests found in the core, each pinned by the test that found it."""
from __future__ import annotations

import asyncio
from pathlib import Path

from glm1m.documents.answer import answer, open_document
from glm1m.documents.budget import Strategy
from glm1m.documents.pages import MAX_RANGE_PAGES, DocumentText, Page, cited_pages
from glm1m.llm import ChatParams
from glm1m.settings import Settings
from glm1m.translation.checkpoint import Checkpoint
from glm1m.translation.fanout import Result
from tests.support.scripted_llm import ScriptedLlm


def test_a_row_recorded_after_a_cut_line_survives_the_next_kill(tmp_path: Path) -> None:
    path = tmp_path / "out.csv.progress.jsonl"
    checkpoint = Checkpoint.open(path, "job")
    checkpoint.record(Result(0, "A"))
    checkpoint.close()
    with path.open("a", encoding="utf-8") as f:
        f.write('{"i": 1, "t": "B')  # killed while writing row 1
    resumed = Checkpoint.open(path, "job")
    resumed.record(Result(1, "B"))  # the resumed run translates row 1 again and records it...
    resumed.record(Result(2, "C"))
    resumed.close()  # ...and is killed before it completes
    assert sorted(Checkpoint.open(path, "job").results) == [0, 1, 2]  # actual: [0, 2]


def test_a_long_range_opens_at_most_max_range_pages() -> None:
    assert len(cited_pages("[p. 2-400]", page_count=500)) == MAX_RANGE_PAGES  # actual: 6


async def test_dense_text_in_a_small_room_does_not_hang(tmp_path: Path) -> None:
    # One rare character is 4 tokens, as byte-level BPE makes some CJK characters and emoji.
    llm = ScriptedLlm(context=1_000, count=lambda t: len(t) // 4 + 1 + 4 * t.count("龘"),
                     reply=lambda messages: "A dense page [p. 1].")
    doc = DocumentText("dense.pdf", (Page(1, "龘" * 600),), 1)
    settings = Settings(data_dir=tmp_path, map_chunk_tokens=256, map_note_tokens=64)
    opened = await open_document(doc, llm, settings, 64, strategy=Strategy.MAP_REDUCE)
    async with asyncio.timeout(5):  # it looped, asking /tokenize ~30,000 times a second
        text = "".join([p async for p in answer(opened, "What?", llm, ChatParams(temperature=0.3, max_tokens=64))])
    assert text == "A dense page [p. 1]."
    notes = [c for c in llm.calls if "<part>" in c.messages[-1]["content"]]
    assert len(notes) > 1 and all(llm.count(c.messages[-1]["content"]) < 1_000 for c in notes)


def test_a_header_cut_short_by_a_kill_starts_the_job_afresh(tmp_path: Path) -> None:
    path = tmp_path / "out.csv.progress.jsonl"
    path.write_text('{"job": "jo', encoding="utf-8")  # killed while writing the header
    checkpoint = Checkpoint.open(path, "job")
    checkpoint.record(Result(0, "A"))
    checkpoint.close()
    assert sorted(Checkpoint.open(path, "job").results) == [0]


def test_a_reversed_range_cites_its_pages() -> None:
    assert cited_pages("see [p. 6-5]", page_count=10) == [5, 6]
