"""GLM-4's function-call answers read as calls and text (server/tool_parser_glm4.py), on the strings
the model's own template and its makers' servers give.

Sources of the strings:
- a call is `NAME\\n{JSON}` right after `<|assistant|>`, a plain answer starts with a newline: the
  chat template of THUDM/glm-4-9b-chat renders a turn as `<|{{ role }}|>{{ metadata }}\\n{{ content }}`
  with the function's name as the metadata (tests/unit/test_tool_parser_template.py quotes it);
  THUDM/GLM-4 basic_demo/glm_server.py process_response reads line 1 as the name (one of the
  request's tools) and the rest as JSON, and gives the answer back as text when that fails;
- several turns in one answer, split on `<|assistant|>`: THUDM/GLM-4
  composite_demo/src/client.py process_response;
- `get_weather\\n{"city": "Beijing"}`: the issue's example and BFCL's GLM handler (decode_ast splits
  the answer on newlines: name, then json.loads of the arguments).
"""

from __future__ import annotations

import json

from glm1m.server.tool_parser_glm4 import Call, CallStream, json_end, parse, tool_names

NAMES = {"get_weather", "get_time"}
WEATHER = Call("get_weather", '{"city": "Beijing"}')
TIME = Call("get_time", '{"timezone": "Asia/Shanghai"}')


def test_a_call_is_the_name_on_its_own_line_then_json_arguments() -> None:
    parsed = parse('get_weather\n{"city": "Beijing"}', NAMES)
    assert parsed.calls == (WEATHER,) and parsed.content == ""
    assert json.loads(parsed.calls[0].arguments) == {"city": "Beijing"}


def test_a_plain_answer_starts_with_an_empty_line_and_is_text() -> None:
    answer = "\n北京今天晴，25°C。"
    assert parse(answer, NAMES).calls == () and parse(answer, NAMES).content == answer


def test_text_before_a_call_is_the_content() -> None:
    parsed = parse('\nLet me look that up.<|assistant|>get_weather\n{"city": "Beijing"}', NAMES)
    assert parsed.calls == (WEATHER,) and parsed.content == "\nLet me look that up."
    # Without the separator (special tokens skipped) a name on a line of its own still starts a call.
    parsed = parse('\nLet me look that up.\nget_weather\n{"city": "Beijing"}', NAMES)
    assert parsed.calls == (WEATHER,) and parsed.content.strip() == "Let me look that up."


def test_several_calls_in_one_answer() -> None:
    two = 'get_weather\n{"city": "Beijing"}<|assistant|>get_time\n{"timezone": "Asia/Shanghai"}'
    assert parse(two, NAMES).calls == (WEATHER, TIME) and parse(two, NAMES).content == ""
    # The same with `<|assistant|>` dropped from the text: the second name follows the JSON.
    assert parse(two.replace("<|assistant|>", ""), NAMES).calls == (WEATHER, TIME)


def test_arguments_that_are_not_a_json_object_leave_the_answer_as_text() -> None:
    for answer in ["get_weather\n{city: Beijing}", "get_weather\n[\"Beijing\"]",
                   'get_weather\n{"city": "Beijing"', "get_weather\nBeijing"]:
        assert parse(answer, NAMES) == parse(answer, set()), answer
        assert parse(answer, NAMES).calls == () and parse(answer, NAMES).content == answer


def test_only_the_requests_tools_are_calls() -> None:
    answer = 'get_stock\n{"code": "600519"}'
    assert parse(answer, NAMES).calls == () and parse(answer, NAMES).content == answer
    assert parse(answer, {"get_stock"}).calls == (Call("get_stock", '{"code": "600519"}'),)


def test_arguments_keep_the_models_text_including_braces_inside_strings() -> None:
    answer = 'get_weather\n{"city": "Bei}jing", "note": "a \\"quoted\\" {word}", "days": [1, 2]}'
    call = parse(answer, NAMES).calls[0]
    assert json.loads(call.arguments) == {"city": "Bei}jing", "note": 'a "quoted" {word}', "days": [1, 2]}
    assert json_end('{"a": "}"} tail', 0) == 10 and json_end('{"a": {', 0) is None


def test_tool_names_come_from_the_requests_tools() -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}},
             {"type": "function", "function": {"name": "get_time"}}]
    assert tool_names(tools) == frozenset(NAMES) and tool_names(None) == frozenset()


def streamed(answer: str, names: set[str] = NAMES, step: int = 1) -> tuple[str, list[Call]]:
    """Feed the answer `step` characters at a time, then once more as final: all that was sent."""
    stream = CallStream(frozenset(names))
    content, calls = "", []
    for end in [*range(step, len(answer), step), len(answer)]:
        text, new = stream.feed(answer[:end])
        content, calls = content + text, calls + new
    text, new = stream.feed(answer, final=True)
    return content + text, calls + new


def test_streaming_sends_what_the_whole_answer_parses_to() -> None:
    answers = [
        'get_weather\n{"city": "Beijing"}',
        "\n北京今天晴，25°C。",
        '\nLet me look that up.<|assistant|>get_weather\n{"city": "Beijing"}',
        'get_weather\n{"city": "Beijing"}<|assistant|>get_time\n{"timezone": "Asia/Shanghai"}',
        'get_weather\n{"city": "Beijing"}<|assistant|>\nIt is sunny.',
        "get_weather\n{city: Beijing} is not JSON",
        "\nget_wea",  # cut off: held back while it may become a name, then sent as text
    ]
    for answer in answers:
        for step in (1, 3, len(answer)):
            content, calls = streamed(answer, step=step)
            parsed = parse(answer, NAMES)
            assert (content, tuple(calls)) == (parsed.content, parsed.calls), (answer, step)


def test_streaming_holds_back_only_what_may_still_be_a_call() -> None:
    stream = CallStream(frozenset(NAMES))
    assert stream.feed("\nThe answer") == ("\nThe answer", [])
    assert stream.feed("\nThe answer\nget_w") == ("\n", [])  # "get_w" may become get_weather
    assert stream.feed("\nThe answer\nget_wet") == ("get_wet", [])
    stream = CallStream(frozenset(NAMES))
    assert stream.feed('get_weather\n{"city": "Bei') == ("", [])
    assert stream.feed('get_weather\n{"city": "Beijing"}') == ("", [WEATHER])
    assert stream.feed('get_weather\n{"city": "Beijing"}<|assist') == ("", [])
