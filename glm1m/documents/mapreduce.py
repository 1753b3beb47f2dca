"""Map-reduce over a document of any length on any served context.

Every prompt is counted with the server's own tokenizer before it is sent: chunks are cut to the
room the question and the notes leave, and a chunk denser than the document's average (a table, a
page of code, CJK text in an English manual) is split again until it fits. Notes that do not fit
one combining prompt are combined in rounds. A part the server fails on is retried, then named in
the answer, while the other parts go on; only a server that cannot be reached stops the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from glm1m.chat import close_now
from glm1m.counting import OnTokens, complete_counting, no_tokens
from glm1m.documents.pages import DocumentText, Kind
from glm1m.documents.split import Chunk, resplit, split
from glm1m.errors import DocumentError, ServerUnavailable, UserFacingError
from glm1m.llm import ChatParams, Llm, Message, Piece
from glm1m.progress import OnProgress, Progress, Stage, Tally, ignore
from glm1m.prompts import combine_ask, document_system, note_ask, notes_block

MIN_CHUNK_TOKENS = 256
# Counted separately, a chunk and the prompt around it can tokenize a few tokens longer together
# (merges across the seam); 1 % and 32 tokens more than cover that.
MARGIN_TOKENS = 32
MARGIN_SHARE = 0.01
ATTEMPTS = 2  # per part, on top of the client's own retries of 429/503/timeouts
COUNT_CONCURRENCY = 8  # /tokenize calls in flight while chunks are checked
# The parts' tokens are reported at most this often: a part takes many seconds, a line a second
# moves, and `glm1m summarize` writes each report as a line of its own.
PART_REPORT_S = 1.0
T = TypeVar("T")


@dataclass(frozen=True)
class MapReduce:
    chunk_tokens: int  # the largest chunk wanted; the served context may force smaller ones
    concurrency: int
    note_tokens: int


@dataclass(frozen=True)
class Note:
    first: int  # the locations the notes come from
    last: int
    kind: Kind
    text: str

    @property
    def pages(self) -> str:
        """"p. 3", "pp. 3–9", "§§ 3–9"."""
        return self.kind.span(self.first, self.last)

    def block(self) -> str:
        return notes_block(self.pages, self.text)


def note_prompt(name: str, chunk: Chunk, question: str) -> list[Message]:
    return [{"role": "system", "content": document_system(chunk.kind)},
            {"role": "user", "content": note_ask(name, chunk.pages, chunk.text, chunk.kind, question)}]


def combine_prompt(name: str, notes: Sequence[Note], question: str, final: bool,
                   kind: Kind = Kind.PAGE) -> list[Message]:
    combined = "\n\n".join(note.block() for note in notes)
    return [{"role": "system", "content": document_system(kind)},
            {"role": "user", "content": combine_ask(name, combined, question, final, kind)}]


def margin(max_model_len: int) -> int:
    return MARGIN_TOKENS + int(max_model_len * MARGIN_SHARE)


async def bounded_gather(items: Sequence[T], work: Callable[[T], Awaitable[object]], limit: int) -> list:
    """work(item) for every item, at most `limit` at once, results in order; cancels the rest
    when one raises."""
    gate = asyncio.Semaphore(limit)

    async def one(item: T) -> object:
        async with gate:
            return await work(item)

    tasks = [asyncio.create_task(one(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()


async def chunk_room(name: str, question: str, llm: Llm, note_tokens: int,
                     kind: Kind = Kind.PAGE) -> int:
    """Tokens a chunk may have: the served context less the note prompt with this question, the
    notes, and the margin. A question that leaves no room gets a sentence."""
    max_len = await llm.max_model_len()
    frame = await llm.count_chat_tokens(note_prompt(name, Chunk("", 1, 1, kind), question))
    room = max_len - frame - note_tokens - margin(max_len)
    if room < MIN_CHUNK_TOKENS:
        raise DocumentError(key="question_too_long", max=max_len, room=max(room, 0),
                            least=MIN_CHUNK_TOKENS)
    return room


async def fitted_chunks(text: DocumentText, chars_per_token: float, room: int, wanted_tokens: int,
                        llm: Llm) -> list[Chunk]:
    """Chunks of at most `room` tokens by the server's count, in document order."""
    target = max(MIN_CHUNK_TOKENS, min(wanted_tokens, room))
    # Splitting a long document takes seconds of CPU: off the event loop, so other sessions stream.
    sized = await counted(await asyncio.to_thread(split, text, int(target * chars_per_token)), llm)
    while any(count > room for _, count in sized):
        fitted: list[tuple[Chunk, int]] = []
        for chunk, count in sized:
            if count <= room:
                fitted.append((chunk, count))
            elif len(chunk.text) <= 1:  # cannot be: room is at least MIN_CHUNK_TOKENS
                raise DocumentError(key="doc_dense_text", name=text.name, per_char=count)
            else:  # cut where this chunk's own density says `room` tokens end, less 10 %
                size = max(1, int(len(chunk.text) * room / count * 0.9))
                pieces = await asyncio.to_thread(resplit, chunk, size)
                fitted += await counted(pieces, llm)
        sized = fitted
    return [chunk for chunk, _ in sized]


async def counted(chunks: list[Chunk], llm: Llm) -> list[tuple[Chunk, int]]:
    counts = await bounded_gather(chunks, lambda c: llm.count_text_tokens(c.text), COUNT_CONCURRENCY)
    return list(zip(chunks, counts, strict=True))


async def read_part(name: str, chunk: Chunk, question: str, llm: Llm, params: ChatParams,
                    on_tokens: OnTokens = no_tokens) -> Note:
    """Notes on one chunk, retried; ServerUnavailable (nothing can be read) goes up at once.
    on_tokens(n) as the notes' tokens come back, where the client counts them."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            text = await complete_counting(llm, note_prompt(name, chunk, question), params, on_tokens)
            return Note(chunk.first_page, chunk.last_page, chunk.kind, text.strip())
        except ServerUnavailable:
            raise
        except UserFacingError:
            if attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable")


async def combine_rounds(name: str, notes: list[Note], question: str, llm: Llm, note_params: ChatParams,
                         answer_tokens: int, concurrency: int, on_progress: OnProgress) -> list[Note]:
    """Combine notes in groups until one final prompt (with an answer of answer_tokens) holds them."""
    max_len = await llm.max_model_len()
    kind = notes[0].kind
    frame = await llm.count_chat_tokens(combine_prompt(name, [], question, final=True, kind=kind))
    final_room = max_len - frame - answer_tokens - margin(max_len)
    round_room = max_len - frame - note_params.max_tokens - margin(max_len)
    sizes = await bounded_gather(notes, lambda n: llm.count_text_tokens(n.block() + "\n\n"),
                                 COUNT_CONCURRENCY)
    rounds = 0
    while sum(sizes) > final_room and len(notes) > 1:
        rounds += 1
        groups = group_by_room(list(zip(notes, sizes, strict=True)), round_room)
        sizes_of = [sum(len(note.text) for note in group) for group in groups]
        combining = Tally(Progress(Stage.COMBINING_ROUND, 0, len(groups), unit="groups", round=rounds),
                          on_progress, size=sum(sizes_of), token_report_s=PART_REPORT_S)

        async def combine(index: int, groups: list[list[Note]] = groups,
                          combining: Tally = combining, sizes_of: list[int] = sizes_of) -> Note:
            group = groups[index]
            combining.start(index, sizes_of[index])
            text = await complete_counting(llm, combine_prompt(name, group, question, final=False,
                                                               kind=kind), note_params,
                                           lambda count: combining.tokens(index, count))
            combining.finish(index, failed=False)
            return Note(group[0].first, group[-1].last, kind, text.strip())

        notes = await bounded_gather(range(len(groups)), combine, concurrency)
        sizes = await bounded_gather(notes, lambda n: llm.count_text_tokens(n.block() + "\n\n"),
                                     COUNT_CONCURRENCY)
    if sum(sizes) > final_room:
        raise DocumentError(key="notes_too_long", name=name, max=max_len, answer=answer_tokens)
    return notes


def group_by_room(sized: list[tuple[Note, int]], room: int) -> list[list[Note]]:
    """Consecutive notes in groups that fit `room` tokens; at least two per group, so every
    round shrinks the count (a note is at most note_tokens long, far under the room)."""
    groups: list[list[Note]] = []
    current: list[Note] = []
    used = 0
    for note, size in sized:
        if current and used + size > room and len(current) >= 2:
            groups.append(current)
            current, used = [], 0
        current.append(note)
        used += size
    if current:
        if len(current) == 1 and groups:
            groups[-1].append(current[0])
        else:
            groups.append(current)
    return groups


async def ask_map_reduce(text: DocumentText, chars_per_token: float, plan: MapReduce, question: str,
                         llm: Llm, params: ChatParams, on_progress: OnProgress = ignore
                         ) -> AsyncIterator[Piece]:
    """Notes from every chunk (concurrently, bounded), combined in rounds if need be, then one
    streamed answer; parts that could not be read are named after it."""
    room = await chunk_room(text.name, question, llm, plan.note_tokens, text.kind)
    chunks = await fitted_chunks(text, chars_per_token, room, plan.chunk_tokens, llm)
    # Parts and combining prompts keep nothing in the server's host KV tier (ChatParams.one_shot):
    # it stays for documents read whole and chats. A 1M-token document's parts, 42.7 GiB, would push
    # out more than they could bring back; another question on it reads its parts from the GPU
    # cache while they are there, else again.
    params = replace(params, one_shot=True)
    note_params = replace(params, temperature=0.2, max_tokens=plan.note_tokens, stop=None)
    # The parts in flight and their notes' tokens move the line while the server reads them; a
    # part counts as read when its notes are done (a 2-part document said "0 of 2 parts" until
    # its end before).
    reading = Tally(Progress(Stage.READING, 0, len(chunks), unit="parts"), on_progress,
                    size=sum(len(chunk.text) for chunk in chunks), token_report_s=PART_REPORT_S)
    failures: list[tuple[Chunk, UserFacingError]] = []

    async def note(index: int) -> Note | None:
        chunk = chunks[index]
        reading.start(index, len(chunk.text))
        try:
            result: Note | None = await read_part(text.name, chunk, question, llm, note_params,
                                                  lambda count: reading.tokens(index, count))
        except ServerUnavailable:
            raise
        except UserFacingError as error:
            failures.append((chunk, error))
            result = None
        reading.finish(index, failed=result is None)
        return result

    found = await bounded_gather(range(len(chunks)), note, plan.concurrency)
    notes = [n for n in found if n is not None]
    if not notes:
        raise failures[-1][1]
    notes = await combine_rounds(text.name, notes, question, llm, note_params, params.max_tokens,
                                 plan.concurrency, on_progress)
    # A stage marker: its parts were read in the stage before, so it shows no rate of its own.
    on_progress(Progress(Stage.COMBINING, len(chunks), len(chunks), unit="parts", resumed=len(chunks)))
    final = combine_prompt(text.name, notes, question, final=True, kind=text.kind)
    pieces = llm.stream_chat(final, params)
    try:
        async for piece in pieces:
            yield piece
    finally:
        await close_now(pieces)
    if failures:
        yield unread_line(failures)


def unread_line(failures: list[tuple[Chunk, UserFacingError]]) -> str:
    ordered = sorted(failures, key=lambda f: f[0].first_page)
    pages = ", ".join(chunk.pages for chunk, _ in ordered)
    return (f"\n\n(Not read: {pages} — the server failed on "
            f"{'that part' if len(ordered) == 1 else 'those parts'} "
            f"({ordered[-1][1]}). The answer above leaves {'it' if len(ordered) == 1 else 'them'} out; "
            f"ask again to retry.)")
