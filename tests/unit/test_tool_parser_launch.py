"""`glm1m serve` starts vLLM with GLM-4's tool parser plugin and tools template for GLM-4-9B-Chat-1M
and the demo model; the user's own tool flags after `--` replace them."""

from __future__ import annotations

from pathlib import Path

from glm1m.server import launch
from glm1m.server.flags import last_value
from glm1m.settings import Settings


def command(*extra: str, **kw) -> list[str]:
    options = launch.resolve(launch.ServeOptions(extra_args=list(extra), **kw), Settings())
    return launch.vllm_command(options, "python")


def test_glm4_9b_chat_1m_and_the_demo_get_the_parser_and_the_template() -> None:
    for cmd in (command(gpu=True), command(demo=True)):
        plugin = Path(last_value(cmd, "--tool-parser-plugin") or "")
        assert plugin == launch.TOOL_PARSER_PLUGIN and plugin.is_file()
        assert last_value(cmd, "--tool-call-parser") == "glm4" and "--enable-auto-tool-choice" in cmd
        assert Path(last_value(cmd, "--chat-template") or "").is_file()
    # The name vLLM is given is the one the plugin registers.
    assert f'PARSER_NAME = "{launch.TOOL_PARSER}"' in launch.TOOL_PARSER_PLUGIN.read_text()


def test_the_users_own_tool_flags_replace_glm1ms() -> None:
    cmd = command("--tool-call-parser=hermes", "--enable-auto-tool-choice", demo=True)
    assert "--tool-parser-plugin" not in cmd and cmd.count("--enable-auto-tool-choice") == 1
    assert last_value(cmd, "--tool-call-parser") == "hermes"
    assert last_value(cmd, "--chat-template") == str(launch.TOOLS_CHAT_TEMPLATE)  # still GLM-4's
    cmd = command("--chat-template", "/mine.jinja", demo=True)
    assert cmd.count("--chat-template") == 1 and last_value(cmd, "--tool-call-parser") == "glm4"


def test_flags_after_dash_dash_still_come_last() -> None:
    assert command("--seed", "3", demo=True)[-2:] == ["--seed", "3"]


def test_other_models_are_left_to_their_own_templates() -> None:
    cmd = command(model="Qwen/Qwen3-8B", gpu=True)
    assert not {"--tool-call-parser", "--tool-parser-plugin", "--chat-template"} & set(cmd)
