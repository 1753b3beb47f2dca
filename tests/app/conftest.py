from __future__ import annotations

import pytest

from tests.support.chainlit_client import ChainlitSession


@pytest.fixture
async def chat(app, healthy_proxy) -> ChainlitSession:
    """A fresh chat session in the real app, after its on_chat_start has finished."""
    session = ChainlitSession(app.url)
    await session.connect()
    await session.started()
    yield session
    await session.close()
