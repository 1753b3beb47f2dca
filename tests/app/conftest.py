from __future__ import annotations

import pytest

from tests.conftest import App
from tests.support.chainlit_client import ChainlitSession


@pytest.fixture(scope="session", params=["open", "production"])
def app(request: pytest.FixtureRequest) -> App:
    """Every app test runs twice: against the open demo configuration, and against the one a team
    runs (login, SQLite history and the file store on; see production_app)."""
    return request.getfixturevalue("open_app" if request.param == "open" else "production_app")


@pytest.fixture
async def chat(app: App, healthy_proxy) -> ChainlitSession:
    """A fresh chat session in the real app, after its on_chat_start has finished."""
    session = app.session()
    await session.connect()
    await session.started()
    yield session
    await session.close()
