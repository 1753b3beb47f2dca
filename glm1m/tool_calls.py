"""Function calls an answer makes, as OpenAI's streamed `tool_calls` deltas bring them: each call's
id and name come once, its JSON arguments in pieces, all by the call's index in the answer
(glm1m serve's GLM-4 parser sends each call whole after the text; vLLM's own path for
tool_choice "required" or a named function sends the arguments in pieces)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """One call: the function's name and its arguments as the model wrote them (JSON, unchecked)."""
    id: str
    name: str
    arguments: str

    def message(self) -> dict[str, Any]:
        """The call as an assistant message's `tool_calls` entry, to send it back with its result."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


@dataclass
class Collected:
    """The calls of one streamed answer, put together from its deltas."""
    parts: dict[int, list[str]] = field(default_factory=dict)

    def add(self, deltas: Any) -> None:
        """One chunk's `delta.tool_calls` (None or a list of ChoiceDeltaToolCall)."""
        for delta in deltas or ():
            slot = self.parts.setdefault(delta.index, ["", "", ""])
            slot[0] = delta.id or slot[0]
            if delta.function is not None:
                slot[1] += delta.function.name or ""
                slot[2] += delta.function.arguments or ""

    def calls(self) -> list[ToolCall]:
        return [ToolCall(slot[0] or f"call-{index}", slot[1], slot[2])
                for index, slot in sorted(self.parts.items()) if slot[1]]
