"""The bounded translation fan-out: order, finish callbacks, the in-flight bound, empty cells,
failed rows and cancellation, against a scripted model client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterable

import pytest

from glm1m.errors import ServerBusy
from glm1m.translation.fanout import Job, Result, Row, translate_rows
from tests.support.scripted_llm import ScriptedLlm

# Held calls wait on events: a bug that loses a release would hang, so fail fast instead.
pytestmark = pytest.mark.timeout(10)


async def rows_of(texts: Iterable[str]) -> AsyncIterator[Row]:
    for index, text in enumerate(texts):
        yield Row(index, text)


async def collect(texts: list[str], job: Job, llm: ScriptedLlm,
                  finished: list[Result] | None = None) -> list[Result]:
    on_finished = finished.append if finished is not None else (lambda result: None)
    return [r async for r in translate_rows(rows_of(texts), job, llm, on_finished)]


TEXTS = [f"row {i}" for i in range(5)]


async def test_results_keep_input_order_when_later_rows_finish_first() -> None:
    llm = ScriptedLlm(hold=lambda text: text == "row 0")
    finished: list[Result] = []
    work = asyncio.create_task(collect(TEXTS, Job("French", concurrency=8), llm, finished))
    await llm.wait_finished(len(TEXTS) - 1)  # every row but the first is done
    assert [r.index for r in finished] and 0 not in [r.index for r in finished]
    llm.release("row 0")
    results = await work
    assert [r.index for r in results] == [0, 1, 2, 3, 4]
    assert [r.translation for r in results] == [t.upper() for t in TEXTS]
    # on_finished saw row 0 last: checkpoints and progress move with the work, not the slowest row.
    assert sorted(r.index for r in finished[:-1]) == [1, 2, 3, 4]
    assert finished[-1].index == 0


async def test_on_finished_follows_finish_order() -> None:
    # Rows are released last to first; on_finished must report them in exactly that order.
    llm = ScriptedLlm(hold=lambda text: True)
    finished: list[Result] = []
    work = asyncio.create_task(collect(TEXTS, Job("French", concurrency=8), llm, finished))
    await llm.wait_started(len(TEXTS))
    for n, text in enumerate(reversed(TEXTS), start=1):
        llm.release(text)
        await llm.wait_finished(n)
    results = await work
    assert [r.index for r in finished] == [4, 3, 2, 1, 0]
    assert [r.index for r in results] == [0, 1, 2, 3, 4]


async def test_no_more_than_concurrency_requests_in_flight() -> None:
    texts = [f"row {i}" for i in range(40)]
    llm = ScriptedLlm(hold=lambda text: True)
    work = asyncio.create_task(collect(texts, Job("French", concurrency=3), llm))
    await llm.wait_started(3)
    # Give every task that could start a chance to; none may, while the three are held.
    for _ in range(20):
        await asyncio.sleep(0)
    assert (len(llm.calls), llm.in_flight) == (3, 3)
    llm.release_all()
    results = await work
    assert len(results) == 40 and all(r.translation for r in results)
    assert llm.max_in_flight == 3


async def test_the_bound_is_reached_without_holds() -> None:
    # The fan-out really runs requests side by side (a sequential loop would pass the bound test).
    llm = ScriptedLlm()
    await collect([f"row {i}" for i in range(30)], Job("French", concurrency=4), llm)
    assert llm.max_in_flight == 4


async def test_empty_and_blank_cells_pass_through_without_a_request() -> None:
    llm = ScriptedLlm()
    results = await collect(["hello", "", "   ", "world", "\n"], Job("French"), llm)
    assert [r.translation for r in results] == ["HELLO", "", "   ", "WORLD", "\n"]
    assert all(r.error is None for r in results)
    assert [c.text for c in llm.calls] == ["hello", "world"]


async def test_a_failed_row_carries_its_sentence_and_the_others_are_translated() -> None:
    busy = ServerBusy("The model server is overloaded. Wait a few seconds.")
    llm = ScriptedLlm(fail=lambda text: busy if text == "row 2" else None)
    finished: list[Result] = []
    results = await collect(TEXTS, Job("French"), llm, finished)
    assert results[2] == Result(2, None, str(busy))
    assert [r.translation for i, r in enumerate(results) if i != 2] == ["ROW 0", "ROW 1", "ROW 3", "ROW 4"]
    assert Result(2, None, str(busy)) in finished  # a failure is a finished row: it is checkpointed


async def test_each_row_is_one_request_with_the_shared_system_prompt() -> None:
    job = Job("French", source_language="English", glossary=(("contract", "contrat"),),
              max_tokens=77, retries=1)
    llm = ScriptedLlm()
    await collect(["a", "b"], job, llm)
    prompts = [c.messages for c in llm.calls]
    assert [m[0] for m in prompts] == [{"role": "system", "content": job.system_prompt()}] * 2
    assert "from English into French" in job.system_prompt()
    assert "- contract → contrat" in job.system_prompt()
    assert [(c.params.temperature, c.params.max_tokens, c.retries) for c in llm.calls] == [(0.0, 77, 1)] * 2


async def test_cancelling_the_consumer_cancels_requests_in_flight() -> None:
    llm = ScriptedLlm(hold=lambda text: True)
    work = asyncio.create_task(collect(TEXTS, Job("French", concurrency=3), llm))
    await llm.wait_started(3)
    work.cancel()
    with pytest.raises(asyncio.CancelledError):
        await work
    # No request completes; every one sent is cancelled. The slot the cancelled first row frees
    # goes to the next waiting row before the rest are cancelled, so one more may have started.
    assert {"row 0", "row 1", "row 2"} <= set(llm.outcomes("cancelled"))
    assert llm.outcomes("cancelled") == [c.text for c in llm.calls]
    assert llm.in_flight == 0 and "row 4" not in llm.outcomes("cancelled")


async def test_closing_the_generator_cancels_requests_in_flight() -> None:
    llm = ScriptedLlm(hold=lambda text: text != "row 0")
    results = translate_rows(rows_of(TEXTS), Job("French", concurrency=8), llm)
    assert isinstance(results, AsyncGenerator)  # typed as an iterator; closable as a generator
    first = await anext(results)
    assert first == Result(0, "ROW 0")
    await llm.wait_started(len(TEXTS))
    await results.aclose()
    assert sorted(llm.outcomes("cancelled")) == ["row 1", "row 2", "row 3", "row 4"]
    assert llm.in_flight == 0
