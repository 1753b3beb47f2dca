from __future__ import annotations

import asyncio

import pytest

from glm1m.chainlit_app.pacing import coalesce
from glm1m.chat import Conversation
from glm1m.settings import Settings


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLM1M_BASE_URL", "http://gpu-box:9000/v1")
    monkeypatch.setenv("GLM1M_MAX_TOKENS", "77")
    settings = Settings()
    assert settings.max_tokens == 77
    assert settings.server_root == "http://gpu-box:9000"


def test_bad_setting_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GLM1M_TEMPERATURE", "9")
    with pytest.raises(ValueError, match="temperature"):
        Settings()


def test_prompt_carries_system_history_and_question() -> None:
    conversation = Conversation("sys", [{"role": "user", "content": "a"},
                                        {"role": "assistant", "content": "b"}])
    assert [m["role"] for m in conversation.prompt("c")] == ["system", "user", "assistant", "user"]
    assert Conversation("").prompt("c") == [{"role": "user", "content": "c"}]


async def pieces(items: list[str]):
    for item in items:
        await asyncio.sleep(0)
        yield item


async def test_coalesce_keeps_every_character_in_order() -> None:
    joined = [p async for p in coalesce(pieces(list("abcdefgh")), interval_s=10)]
    assert "".join(joined) == "abcdefgh"
    assert joined == ["a", "bcdefgh"]  # first piece at once, the rest when the stream ends


async def test_coalesce_with_no_interval_passes_pieces_through() -> None:
    assert [p async for p in coalesce(pieces(["x", "y"]), interval_s=0)] == ["x", "y"]
