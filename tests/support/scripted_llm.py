"""A scripted stand-in for the model server: the `glm1m.llm.Llm` Protocol with no network.

Replies, failures and holds are functions of the last user message, so a test says what each
input gets; every call is recorded, so a test can assert on prompts, concurrency and cancellation.
Holds are asyncio.Event gates: a held call waits until the test releases it, so "later rows finish
first" is arranged by events, never by sleeping.

    llm = ScriptedLlm(reply=lambda messages: "OK", hold=lambda text: text == "row 0")
    ...start the work in a task...
    await llm.wait_finished(4)   # every other row is done
    llm.release("row 0")
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from glm1m.errors import UserFacingError
from glm1m.llm import ChatParams, Message, Piece
from glm1m.tool_calls import ToolCall


def user_text(messages: list[Message]) -> str:
    """The last user message: what a row, a chunk note or a question puts in front of the model."""
    return next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")


def echo_upper(messages: list[Message]) -> str:
    """The default reply: recognisably derived from the input, so tests can tell rows apart."""
    return user_text(messages).upper()


def quarter_tokens(text: str) -> int:
    """A deterministic tokenizer: about four characters a token, like English BPE."""
    return len(text) // 4 + 1


Outcome = Literal["running", "finished", "failed", "cancelled"]


@dataclass
class Call:
    """One request as the scripted server saw it; `outcome` changes as it ends."""
    kind: Literal["complete", "stream"]
    messages: list[Message]
    params: ChatParams
    retries: int | None = None
    outcome: Outcome = "running"

    @property
    def text(self) -> str:
        return user_text(self.messages)


@dataclass
class ScriptedLlm:
    """An Llm whose answers, failures and timing the test writes. Mutable on purpose: it is the
    test's record of what the core sent."""
    context: int = 8192  # what max_model_len() serves
    reply: Callable[[list[Message]], str] = echo_upper
    count: Callable[[str], int] = quarter_tokens
    hold: Callable[[str], bool] = lambda text: False  # held calls wait for release(text)
    fail: Callable[[str], UserFacingError | None] = lambda text: None
    piece_chars: int = 5  # stream_chat yields the reply in pieces this long
    chat_overhead: int = 4  # tokens the chat template adds per message
    # stream_turn's answer, from the messages so far and the tool_choice: its calls, after any
    # words the model writes first (GLM-4 may write text, `<|assistant|>`, then a call turn, in
    # one answer); no call answers with `reply`'s text.
    turn: Callable[[list[dict[str, Any]], str], Sequence[str | ToolCall]] = lambda messages, choice: []

    # What happened, for the test to read.
    calls: list[Call] = field(default_factory=list, init=False)
    counted: list[str] = field(default_factory=list, init=False)  # texts given to count_text_tokens
    choices: list[str] = field(default_factory=list, init=False)  # stream_turn's tool_choice, in order
    in_flight: int = field(default=0, init=False)
    max_in_flight: int = field(default=0, init=False)
    _gates: dict[str, asyncio.Event] = field(default_factory=dict, init=False)
    _changed: asyncio.Condition | None = field(default=None, init=False)

    # The Protocol.
    async def max_model_len(self, refresh: bool = False) -> int:
        return self.context

    async def count_chat_tokens(self, messages: list[Message]) -> int:
        return sum(self.count(m["content"]) + self.chat_overhead for m in messages)

    async def count_text_tokens(self, text: str) -> int:
        self.counted.append(text)
        return self.count(text)

    async def complete(self, messages: list[Message], params: ChatParams,
                       retries: int | None = None) -> str:
        call = Call("complete", list(messages), params, retries)
        await self._enter(call)
        try:
            text = await self._answer(call)
        except BaseException as error:
            await self._leave(call, error)
            raise
        await self._leave(call, None)
        return text

    async def stream_chat(self, messages: list[Message], params: ChatParams) -> AsyncIterator[Piece]:
        call = Call("stream", list(messages), params)
        await self._enter(call)
        try:
            text = await self._answer(call)
            for start in range(0, len(text), self.piece_chars):
                yield text[start:start + self.piece_chars]
                await asyncio.sleep(0)
        except BaseException as error:  # GeneratorExit too: the consumer closed the stream
            await self._leave(call, error)
            raise
        await self._leave(call, None)

    async def stream_turn(self, messages: Sequence[dict[str, Any]], params: ChatParams,
                          tools: Sequence[dict[str, Any]] = (), tool_choice: str = "auto"
                          ) -> AsyncIterator[Piece | ToolCall]:
        """stream_chat with tools: `turn` says which calls the answer makes, and the words before
        them (no call: the reply's text, streamed); each call's tool_choice is kept in `choices`."""
        self.choices.append(tool_choice)
        calls = self.turn(list(messages), tool_choice) if tools and tool_choice != "none" else []
        if not any(isinstance(made, ToolCall) for made in calls):
            text = self.stream_chat(list(messages), params)  # type: ignore[arg-type]
            try:
                async for piece in text:
                    yield piece
            finally:
                await text.aclose()  # type: ignore[attr-defined]
            return
        call = Call("stream", list(messages), params)  # type: ignore[arg-type]
        await self._enter(call)
        await asyncio.sleep(0)
        for made in calls:
            yield made
        await self._leave(call, None)

    # What tests drive and read.
    def release(self, text: str) -> None:
        """Let the held call(s) with this user text go on (also before they have started)."""
        self._gate(text).set()

    def release_all(self) -> None:
        """Let every held call go on, and hold no more from now on."""
        self.hold = lambda text: False
        for gate in self._gates.values():
            gate.set()

    async def wait_started(self, n: int) -> None:
        await self._wait(lambda: len(self.calls) >= n)

    async def wait_finished(self, n: int) -> None:
        """Until n calls have ended, whether answered or failed."""
        await self._wait(lambda: len(self.ended()) >= n)

    def ended(self) -> list[Call]:
        return [c for c in self.calls if c.outcome in ("finished", "failed")]

    def outcomes(self, outcome: Outcome) -> list[str]:
        """User texts of the calls in that state, in the order they were sent."""
        return [c.text for c in self.calls if c.outcome == outcome]

    # Inside.
    def _gate(self, text: str) -> asyncio.Event:
        return self._gates.setdefault(text, asyncio.Event())

    def _condition(self) -> asyncio.Condition:
        # Made on first use, inside the test's running loop.
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def _wait(self, predicate: Callable[[], bool]) -> None:
        async with self._condition():
            await self._condition().wait_for(predicate)

    async def _notify(self) -> None:
        async with self._condition():
            self._condition().notify_all()

    async def _enter(self, call: Call) -> None:
        self.calls.append(call)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await self._notify()

    async def _answer(self, call: Call) -> str:
        # One real suspension per call, as a network round trip has: without it concurrent
        # requests would run one after another and no bound would ever be tested.
        await asyncio.sleep(0)
        if self.hold(call.text):
            await self._gate(call.text).wait()
        error = self.fail(call.text)
        if error is not None:
            raise error
        return self.reply(call.messages)

    async def _leave(self, call: Call, error: BaseException | None) -> None:
        self.in_flight -= 1
        if error is None:
            call.outcome = "finished"
        elif isinstance(error, (asyncio.CancelledError, GeneratorExit)):
            call.outcome = "cancelled"
            return  # a cancelled task must not await again (nor may a closing generator)
        else:
            call.outcome = "failed"
        await self._notify()
