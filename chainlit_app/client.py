"""The app process's one model-server client (it holds the HTTP connection pools), and its one
prefill clock (it learns this server's speed from the prompts it reads)."""

from __future__ import annotations

from glm1m.llm import LlmClient
from glm1m.serving import PrefillClock, read
from glm1m.settings import get_settings

_llm: LlmClient | None = None
_clock: PrefillClock | None = None


def llm() -> LlmClient:
    global _llm
    if _llm is None:
        _llm = LlmClient(get_settings())
    return _llm


def prefill_clock() -> PrefillClock:
    global _clock
    if _clock is None:
        _clock = PrefillClock(read(get_settings()))
    return _clock
