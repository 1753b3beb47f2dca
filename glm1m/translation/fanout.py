"""Translate rows with a bounded asyncio fan-out; results come back in input order.

vLLM batches concurrent requests itself, so the fastest client keeps a steady number of requests
in flight and never more: a Semaphore bounds them, and a window of at most 2x that many tasks
bounds memory however many rows the input has. Nothing here imports Chainlit.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass

from glm1m.catalog import EN, Said, render, said
from glm1m.counting import OnTokens, complete_counting, no_tokens
from glm1m.errors import ContextTooLong, UserFacingError
from glm1m.llm import ChatParams, Llm
from glm1m.prompts import table_translator


@dataclass(frozen=True)
class Job:
    target_language: str
    source_language: str | None = None
    glossary: tuple[tuple[str, str], ...] = ()
    concurrency: int = 64
    max_tokens: int = 1024
    retries: int = 4  # per row, with the OpenAI client's exponential backoff (429/503/timeouts)
    # The language translation_error is written in: the reader's (EN or ZH), not the target. Not
    # part of the job's key (job.job_key): a rerun in another language resumes the same rows.
    lang: str = EN

    def system_prompt(self) -> str:
        """Identical for every row, so vLLM's prefix cache serves it after the first request."""
        return table_translator(self.target_language, self.source_language, self.glossary)


@dataclass(frozen=True)
class Row:
    index: int
    text: str


@dataclass(frozen=True)
class Result:
    index: int
    translation: str | None  # None when the row failed; never an error text
    error: str | None = None


async def translate_one(row: Row, job: Job, llm: Llm, on_tokens: OnTokens = no_tokens) -> Result:
    """One row's translation; on_tokens(n) as its tokens come back (where the client counts them)."""
    if not row.text.strip():
        return Result(row.index, row.text)  # empty cells pass through untranslated
    messages = [{"role": "system", "content": job.system_prompt()},
                {"role": "user", "content": row.text}]
    try:
        # A row is asked once: it keeps nothing in the server's host KV tier (ChatParams.one_shot).
        params = ChatParams(temperature=0.0, max_tokens=job.max_tokens, one_shot=True)
        text = await complete_counting(llm, messages, params, on_tokens, retries=job.retries)
    except ContextTooLong:
        return Result(row.index, None, await too_long(row, job, llm))
    except UserFacingError as error:
        return Result(row.index, None, error.in_language(job.lang))
    return Result(row.index, text.strip())


async def too_long(row: Row, job: Job, llm: Llm) -> str:
    """A cell the served context cannot hold, said as a cell's error: the client's own sentence is
    a chat's ("start a new chat"), which a table's row cannot follow."""
    served: Said | str
    try:
        served = said("table_cell_context", max=await llm.max_model_len())
    except UserFacingError:  # the server went away since: the sentence without its size
        served = ""
    glossary = said("table_cell_glossary", count=len(job.glossary)) if job.glossary else ""
    return render(job.lang, "table_cell_too_long", chars=len(row.text), served=served,
                  glossary=glossary)


async def translate_rows(rows: AsyncIterable[Row], job: Job, llm: Llm,
                         on_finished: Callable[[Result], None] = lambda result: None,
                         on_started: Callable[[Row], OnTokens] = lambda row: no_tokens
                         ) -> AsyncIterator[Result]:
    """Translate rows with at most job.concurrency requests in flight; yields in input order.

    on_finished(result) runs as soon as a row is done, in whatever order rows finish: a checkpoint
    written there keeps rows that finished behind a slow earlier one, should the process die, and
    progress counted there moves with the work, not with the slowest row. on_started(row) runs as
    its request goes out (it has its turn under the bound) and returns what counts its tokens as
    they come back: between finished rows, the rows in flight and their tokens are the progress.
    Closing the generator (or cancelling its consumer) cancels every request still in flight.
    """
    limit = asyncio.Semaphore(job.concurrency)
    window: deque[asyncio.Task[Result]] = deque()
    max_window = 2 * job.concurrency

    async def bounded(row: Row) -> Result:
        async with limit:
            result = await translate_one(row, job, llm, on_started(row))
        on_finished(result)
        return result

    try:
        async for row in rows:
            window.append(asyncio.create_task(bounded(row)))
            while window and (len(window) >= max_window or window[0].done()):
                yield await window.popleft()
        while window:
            yield await window.popleft()
    finally:
        for task in window:
            task.cancel()
        if window:
            await asyncio.gather(*window, return_exceptions=True)
