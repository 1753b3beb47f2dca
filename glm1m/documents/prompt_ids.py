"""A whole-document prompt sent as the server's own token ids, its document's part tokenized once.

vLLM templates and tokenizes every chat request again, prefix-cache hit or not: asked as chat, a
question on a 988,983-token document already in the GPU prefix cache began after 2.71 s and 2.28 s
(vLLM's own time to first token); asked as the same prompt's token ids on /v1/completions, after
0.53 s and 0.54 s; /tokenize of those messages took 2.54 s (one H200, vLLM 0.26.0, measured
2026-12-02, docs/benchmarks.md). So the document's part is tokenized once and kept: in memory
with the open document, and on the shelf for one opened from it (the CLI's second run, a page's
next chat), keyed by the served model and a digest of that part's text (the system prompt and the
document's name are in it).

A prompt is the document's part (everything before the question's, the template's opening
included) and the question's, as its builder returned them (prompt.py's `Prompt`), never found
again in the rendered text. The question's ids are those of a small frame, the prompt's system
message and the document part's last line, asked with and without the question: what the one
adds to the other, checked to begin with the other's ids, is what the question adds to the
document. Anything that does not add up, or a server whose /tokenize takes no chat, sends the
question as chat, as before: a question never fails for want of ids.
"""

from __future__ import annotations

import asyncio
import hashlib
from array import array
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from glm1m.documents.prompt import Prompt
from glm1m.errors import UserFacingError
from glm1m.llm import ChatParams, Llm, Message, Piece
from glm1m.settings import Settings

if TYPE_CHECKING:  # shelf.py imports store.py, which imports answer.py, which imports this
    from glm1m.documents.shelf import Shelf, ShelfKey

ID_TYPE = "I"  # vocabularies are far below 2**32 (GLM-4's: 151,552): 4 bytes an id, in memory and on disk


@runtime_checkable
class TakesIds(Protocol):
    """A model server that tokenizes chats and takes a prompt as token ids (LlmClient does)."""
    settings: Settings

    async def max_model_len(self, refresh: bool = False) -> int: ...

    async def tokenize_chat(self, messages: list[Message], generation: bool = True) -> dict[str, Any]: ...

    def stream_chat(self, messages: list[Message], params: ChatParams,
                    ids: Sequence[int] | None = None) -> AsyncIterator[Piece]: ...


@dataclass(frozen=True)
class Prefix:
    """A document part's ids, and its frame's: the system message and the part's last line."""
    document: array
    frame: array

    def data(self) -> bytes:
        """As the shelf keeps it: the frame's length, the frame, the document part."""
        return array(ID_TYPE, [len(self.frame)]).tobytes() + self.frame.tobytes() + self.document.tobytes()

    @classmethod
    def of(cls, data: bytes) -> Prefix | None:
        """data's inverse; None for bytes it did not write (a damaged file is a miss)."""
        ids = array(ID_TYPE)
        try:
            ids.frombytes(data)
        except ValueError:
            return None
        if not ids or not 0 < ids[0] < len(ids) - 1:
            return None
        return cls(ids[1 + ids[0]:], ids[1:1 + ids[0]])


@dataclass
class KeptIds:
    """The ids of one open document's part, kept for its next questions: in memory (the latest
    one: another system prompt or model makes another), and on `shelf` under `key` when the
    document came from the shelf (a set's under one of its documents: asking.settle; the name
    digests the whole part, so no other prompt shares it). Mutable on purpose: the open document
    holds it."""
    shelf: Shelf | None = None
    key: ShelfKey | None = None
    _latest: tuple[str, Prefix] | None = field(default=None, repr=False)
    # Held while a part is found or tokenized: requests that start together (a document's
    # sections) tokenize it once, not once each.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    async def find(self, name: str) -> Prefix | None:
        if self._latest is not None and self._latest[0] == name:
            return self._latest[1]
        if self.shelf is None or self.key is None:
            return None
        data = await self.shelf.aio.ids(self.key, name)
        found = Prefix.of(data) if data is not None else None
        if found is not None:
            self._latest = (name, found)
        return found

    async def keep(self, name: str, prefix: Prefix) -> None:
        self._latest = (name, prefix)
        if self.shelf is not None and self.key is not None:
            await self.shelf.aio.keep_ids(self.key, name, prefix.data())


@dataclass(frozen=True)
class PromptIds:
    """A whole-document prompt as token ids, on its way on /v1/completions."""
    llm: TakesIds
    messages: list[Message]  # the same prompt as chat: what the router's affinity reads
    ids: array

    def stream(self, params: ChatParams) -> AsyncIterator[Piece]:
        return self.llm.stream_chat(self.messages, params, self.ids)


async def prompt_ids(llm: Llm, prompt: Prompt, kept: KeptIds) -> PromptIds | None:
    """`prompt` (a whole-document prompt, as its builder made it) as the server's token ids, the
    document part's from `kept` or else tokenized and kept there. None when they cannot be had or
    do not add up: send its messages as chat."""
    if not isinstance(llm, TakesIds):
        return None
    system: Message = {"role": "system", "content": prompt.system}
    part, frame = prompt.document_part, prompt.last_line  # frame: "</document>\n\n"
    from glm1m.documents.shelf import count_key  # here: see the import of Shelf above
    try:
        served = count_key(llm.settings.model, await llm.max_model_len())
        name = hashlib.sha256("\0".join((served, prompt.system, part)).encode()).hexdigest()[:32]
        asked = await tokenized(llm, [system, {"role": "user", "content": frame + prompt.question_part}])
        prefix = await kept.find(name)
        if prefix is None:
            prefix = Prefix(await tokenized(llm, [system, {"role": "user", "content": part}], False),
                            await tokenized(llm, [system, {"role": "user", "content": frame}], False))
            if asked[:len(prefix.frame)] == prefix.frame:
                await kept.keep(name, prefix)
    # /tokenize failed (the chat route then says why), gave no ids (a trimming proxy), or the shelf
    # could not keep them: the question goes as chat.
    except (UserFacingError, KeyError, TypeError, ValueError, OverflowError, OSError):
        return None
    if asked[:len(prefix.frame)] != prefix.frame:
        return None  # the question's first token would merge with the document's last
    return PromptIds(llm, prompt.messages, prefix.document + asked[len(prefix.frame):])


async def appended_ids(llm: Llm, shared: list[Message], tail: list[Message], kept: KeptIds
                       ) -> PromptIds | None:
    """`shared + tail` as the server's token ids: `shared` (what every request of a job begins
    with: a system message and a document) tokenized once and kept in `kept`; `tail` (the messages
    after it: a document's section) through a small frame, the system message and the last line of
    shared's last message, asked with and without the tail. None when they cannot be had or do not
    add up: send the messages as chat."""
    if not isinstance(llm, TakesIds) or len(shared) < 2 or not tail:
        return None
    system, last = shared[0], shared[-1]
    line = last["content"][last["content"].rstrip("\n").rfind("\n") + 1:]  # its last line
    frame: list[Message] = [system, {"role": last["role"], "content": line}]
    from glm1m.documents.shelf import count_key  # here: see the import of Shelf above
    try:
        async with kept.lock:
            served = count_key(llm.settings.model, await llm.max_model_len())
            opened = "\0".join([served, *(m["content"] for m in shared)])
            name = hashlib.sha256(opened.encode()).hexdigest()[:32]
            prefix = await kept.find(name)
            if prefix is None:
                prefix = Prefix(await tokenized(llm, shared, False), await tokenized(llm, frame, False))
                await kept.keep(name, prefix)
        asked = await tokenized(llm, frame + tail)
    except (UserFacingError, KeyError, TypeError, ValueError, OverflowError, OSError):
        return None  # as in prompt_ids: the request goes as chat, which says why when it fails
    if asked[:len(prefix.frame)] != prefix.frame:
        return None
    return PromptIds(llm, shared + tail, prefix.document + asked[len(prefix.frame):])


async def tokenized(llm: TakesIds, messages: list[Message], generation: bool = True) -> array:
    return array(ID_TYPE, (await llm.tokenize_chat(messages, generation))["tokens"])
