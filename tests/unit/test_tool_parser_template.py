"""server/glm4_chat_template.jinja renders what GLM-4's own template renders, byte for byte, for the
messages GLM-4's makers' server would have handed it.

GLM4_TEMPLATE is THUDM/glm-4-9b-chat's tokenizer_config.json chat_template as copied verbatim in the
Berkeley function-calling leaderboard's GLM handler (ShishirPatil/gorilla,
berkeley-function-call-leaderboard/bfcl_eval/model_handler/local_inference/glm.py, GLMHandler
._format_prompt's docstring). The makers' conversion of OpenAI messages is THUDM/GLM-4
basic_demo/glm_server.py process_messages: tools go into a system item's `tools` key, a `tool`
message becomes an `observation`, an assistant's tool call an assistant item whose `metadata` is the
function's name and whose content is the arguments. Both are rendered in the environment transformers
renders chat templates in (trim_blocks, lstrip_blocks, its own tojson), which vLLM uses.
"""

# ruff: noqa: E501 -- GLM4_TEMPLATE is quoted verbatim; its Chinese lines count double in width.
from __future__ import annotations

import json
from pathlib import Path

import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

OURS = Path(__file__).resolve().parents[2] / "server" / "glm4_chat_template.jinja"

GLM4_TEMPLATE = (
    "[gMASK]<sop>{% for item in messages %}{% if item['tools'] is defined %}<|system|>\n你是一个名为 ChatGLM 的人工智能助手。"
    "你是基于智谱AI训练的语言模型 GLM-4 模型开发的，你的任务是针对用户的问题和要求提供适当的答复和支持。\n\n# 可用工具"
    "{% set tools = item['tools'] %}{% for tool in tools %}{% if tool['type'] == 'function' %}\n\n## "
    "{{ tool['function']['name'] }}\n\n{{ tool['function'] | tojson(indent=4) }}\n在调用上述函数时，请使用 Json 格式表示调用的参数。"
    "{% elif tool['type'] == 'python' %}\n\n## python\n\n当你向 `python` 发送包含 Python 代码的消息时，该代码将会在一个有状态的 "
    "Jupyter notebook 环境中执行。\n`python` 返回代码执行的输出，或在执行 60 秒后返回超时。\n`/mnt/data` 将会持久化存储你的文件。"
    "在此会话中，`python` 无法访问互联网。不要使用 `python` 进行任何网络请求或者在线 API 调用，这些在线内容的访问将不会成功。"
    "{% elif tool['type'] == 'simple_browser' %}\n\n## simple_browser\n\n你可以使用 `simple_browser` 工具。该工具支持以下函数："
    "\n`search(query: str, recency_days: int)`：使用搜索引擎进行查询并显示结果，可以使用 `recency_days` 参数控制搜索内容的时效性。"
    "\n`mclick(ids: list[int])`：获取一系列指定 id 的页面内容。每次调用时，须选择3-10个页面。选择多个角度的页面，同时尽可能选择可信任的"
    "信息来源。考虑到部分页面是无法加载的，你也可以多打开一些可能有用的页面而不用担心内容过多。\n`open_url(url: str)`：打开指定的 URL。"
    "\n\n使用 `【{引用 id}†{引用文本}】` 来引用内容。\n\n操作步骤：1. 使用 `search` 来获得信息列表; 2. 使用 `mclick` 来获取指定 ID "
    "页面的内容; 3. 根据获得的内容进行回复。在回复中应当引用信息来源。\n 如果用户提供了 URL，也可以用 `open_url` 直接打开页面。"
    "\n如果初次搜索结果没有找到合适的信息，也可以再次使用 `search` 进行搜索。{% elif tool['type'] == 'cogview' %}\n\n## cogview\n\n"
    "如果用户的请求中包含了对图像的描述，你可以使用 `cogview` 来生成图像并展示给用户。你需要向 `cogview` 发送图像描述，规则：\n- "
    "发送给 `cogview` 的消息必须使用英语。用户的中文描述必须完全翻译为英语。\n- 应当尽可能详细地描述图像生成的需求，需求描述约 100 "
    "英文单词。\n- 保持用户原始描述的意图。不要虚构内容或者没见过的人物。\n- 如无特殊说明，所在地为中国，持有中国立场并遵循中国社会主义价值观。"
    "{% endif %}{% endfor %}{% endif %}{% if item['content'] %}<|{{ item['role'] }}|>{{ item['metadata'] }}\n"
    "{{ item['content'] }}{% endif %}{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "今天的天气 / the weather today",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}


def render(template: str, messages: list[dict], **kwargs: object) -> str:
    """As transformers' apply_chat_template renders (utils/chat_template_utils.py)."""
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])

    def tojson(x: object, ensure_ascii: bool = False, indent: int | None = None,
               separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    return env.from_string(template).render(messages=messages, add_generation_prompt=True, **kwargs)


def ours(messages: list[dict], tools: list[dict] | None = None) -> str:
    return render(OURS.read_text(encoding="utf-8"), messages, tools=tools)


def test_a_plain_chat_renders_as_glm4s_template_does() -> None:
    chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "你好"}]
    assert ours(chat) == render(GLM4_TEMPLATE, chat)
    assert ours(chat) == ("[gMASK]<sop><|system|>\nBe brief.<|user|>\nHi<|assistant|>\nHello."
                          "<|user|>\n你好<|assistant|>")


def test_tools_render_as_the_makers_server_hands_them_to_glm4s_template() -> None:
    question = [{"role": "user", "content": "Weather in Beijing?"}]
    makers = [{"role": "system", "content": None, "tools": [WEATHER, TIME]}, *question]
    assert ours(question, tools=[WEATHER, TIME]) == render(GLM4_TEMPLATE, makers)
    prompt = ours(question, tools=[WEATHER, TIME])
    assert "# 可用工具\n## get_weather\n\n{\n    \"name\": \"get_weather\"," in prompt
    assert "今天的天气" in prompt  # tojson keeps non-ASCII as it is, as transformers' filter does


def test_a_call_and_its_result_render_as_metadata_and_observation_turns() -> None:
    call = {"id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Beijing"}'}}
    openai = [{"role": "user", "content": "Weather in Beijing?"},
              {"role": "assistant", "content": None, "tool_calls": [call]},
              {"role": "tool", "tool_call_id": "c1", "content": "sunny, 25°C"}]
    makers = [{"role": "system", "content": None, "tools": [WEATHER]}, openai[0],
              {"role": "assistant", "metadata": "get_weather", "content": '{"city": "Beijing"}'},
              {"role": "observation", "content": "sunny, 25°C"}]
    assert ours(openai, tools=[WEATHER]) == render(GLM4_TEMPLATE, makers)
    assert ours(openai, tools=[WEATHER]).endswith(
        '<|assistant|>get_weather\n{"city": "Beijing"}<|observation|>\nsunny, 25°C<|assistant|>')


def test_arguments_vllm_has_turned_into_a_dict_render_as_json() -> None:
    # vLLM parses tool_calls' arguments into dicts before templating (renderers/chat_utils.py
    # _postprocess_messages); the same text comes out.
    call = {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "北京"}}}
    two = {"type": "function", "function": {"name": "get_time", "arguments": {}}}
    prompt = ours([{"role": "user", "content": "q"},
                   {"role": "assistant", "content": "Let me look.", "tool_calls": [call, two]}])
    assert prompt.endswith('<|user|>\nq<|assistant|>\nLet me look.<|assistant|>get_weather\n'
                           '{"city": "北京"}<|assistant|>get_time\n{}<|assistant|>')
