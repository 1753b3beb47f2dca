"""OpenAI tool calls through `glm1m serve --demo`: the real vLLM server with glm1m's GLM-4 tool parser
plugin and tools template (server/tool_parser_glm4.py, server/glm4_chat_template.jinja).

Random weights never call a tool on their own, so each request holds the answer to GLM-4's call text
(`NAME\\nJSON`, see the parser's docstring) with vLLM's structured outputs (a regex); with
tool_choice "auto" it is the plugin that turns that text into `tool_calls`: without it vLLM refuses
auto tool choice (400) or, given a parser that does not know the format, returns it as text.
"""

from __future__ import annotations

import json

import httpx
import pytest
from openai import AsyncOpenAI

from glm1m.server.launch import SERVED_NAME

pytestmark = pytest.mark.server

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city today",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "parameters": {"type": "object", "properties": {}}}}
QUESTION = [{"role": "user", "content": "What is the weather in Beijing, and the time?"}]


@pytest.fixture
async def client(model_server) -> AsyncOpenAI:
    openai = AsyncOpenAI(base_url=model_server.base_url, api_key=model_server.api_key, max_retries=0)
    yield openai
    await openai.close()


def held_to(regex: str) -> dict:
    return {"structured_outputs": {"regex": regex}}


async def ask(client: AsyncOpenAI, regex: str, **kwargs):
    return await client.chat.completions.create(
        model=SERVED_NAME, messages=QUESTION, tools=[WEATHER, TIME], max_tokens=60, temperature=0,
        extra_body=held_to(regex), **kwargs)


async def test_a_call_comes_back_as_tool_calls_and_its_result_goes_back_as_an_observation(
        client: AsyncOpenAI, model_server) -> None:
    reply = await ask(client, r'get_weather\n\{"city": "Beijing"\}', tool_choice="auto")
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    [call] = choice.message.tool_calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Beijing"}
    assert call.id.startswith("chatcmpl-tool-")

    history = [*QUESTION, choice.message.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": call.id, "content": "sunny, 25°C"}]
    answer = await client.chat.completions.create(model=SERVED_NAME, messages=history,
                                                  tools=[WEATHER, TIME], max_tokens=8, temperature=0)
    assert answer.choices[0].message.content and not answer.choices[0].message.tool_calls

    # What the model read: the tools in GLM-4's words, the call as an assistant turn named by the
    # function, the result as an observation (the template, through the server's own renderer).
    rendered = httpx.post(f"{model_server.root}/tokenize", headers=model_server.headers, timeout=60,
                          json={"model": SERVED_NAME, "messages": history, "tools": [WEATHER, TIME],
                                "add_generation_prompt": True}).json()["tokens"]
    prompt = httpx.post(f"{model_server.root}/detokenize", headers=model_server.headers, timeout=60,
                        json={"model": SERVED_NAME, "tokens": rendered}).json()["prompt"]
    assert "# 可用工具\n## get_weather\n\n{" in prompt and "\n## get_time\n" in prompt
    assert prompt.endswith('<|assistant|>get_weather\n{"city": "Beijing"}<|observation|>\n'
                           "sunny, 25°C<|assistant|>")


async def test_text_before_calls_and_several_calls_in_one_answer(client: AsyncOpenAI) -> None:
    reply = await ask(client, r'I will look\.\nget_weather\n\{"city": "Beijing"\}\nget_time\n\{\}',
                      tool_choice="auto")
    message = reply.choices[0].message
    assert [c.function.name for c in message.tool_calls] == ["get_weather", "get_time"]
    assert [json.loads(c.function.arguments) for c in message.tool_calls] == [{"city": "Beijing"}, {}]
    assert message.content == "I will look."


async def test_arguments_that_are_not_json_come_back_as_the_text(client: AsyncOpenAI) -> None:
    reply = await ask(client, r"get_weather\n\{city: Beijing\}", tool_choice="auto")
    assert reply.choices[0].message.content == "get_weather\n{city: Beijing}"
    assert not reply.choices[0].message.tool_calls and reply.choices[0].finish_reason == "stop"


async def test_streamed_calls_arrive_whole_after_the_text(client: AsyncOpenAI) -> None:
    stream = await ask(client, r'I will look\.\nget_weather\n\{"city": "Beijing"\}', tool_choice="auto",
                       stream=True)
    content, calls, finish = "", [], None
    async for chunk in stream:
        delta = chunk.choices[0].delta
        content += delta.content or ""
        calls += delta.tool_calls or []
        finish = chunk.choices[0].finish_reason or finish
    assert content.strip() == "I will look." and finish == "tool_calls"
    [call] = calls
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Beijing"}


async def test_a_stream_cut_inside_a_possible_call_still_sends_the_text(client: AsyncOpenAI) -> None:
    stream = await ask(client, r'get_weather\n\{"city": "Bei', tool_choice="auto", stream=True)
    content = "".join([chunk.choices[0].delta.content or "" async for chunk in stream])
    assert content == 'get_weather\n{"city": "Bei'


async def test_tool_choice_none_leaves_the_call_text_as_text(client: AsyncOpenAI) -> None:
    call = r'get_weather\n\{"city": "Beijing"\}'
    assert (await ask(client, call, tool_choice="auto")).choices[0].message.tool_calls
    reply = await ask(client, call, tool_choice="none")
    assert reply.choices[0].message.content == 'get_weather\n{"city": "Beijing"}'
    assert not reply.choices[0].message.tool_calls


async def test_a_named_function_goes_through_vllms_own_json_path(client: AsyncOpenAI) -> None:
    # vLLM holds the answer to the function's JSON arguments itself (structured outputs from the
    # tool's schema) and names the call: the plugin keeps supports_required_and_named.
    reply = await client.chat.completions.create(
        model=SERVED_NAME, messages=QUESTION, tools=[WEATHER, TIME], max_tokens=20, temperature=0,
        tool_choice={"type": "function", "function": {"name": "get_time"}})
    [call] = reply.choices[0].message.tool_calls
    assert call.function.name == "get_time" and call.function.arguments.lstrip().startswith("{")
