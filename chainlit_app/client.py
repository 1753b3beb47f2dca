"""The app process's one model-server client (it holds the HTTP connection pools)."""

from __future__ import annotations

from glm1m.llm import LlmClient
from glm1m.settings import get_settings

_llm: LlmClient | None = None


def llm() -> LlmClient:
    global _llm
    if _llm is None:
        _llm = LlmClient(get_settings())
    return _llm
