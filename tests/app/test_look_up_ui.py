"""Looking things up on the page (issue 28, item 2), through the real app and the real demo server
with glm1m's GLM-4 tool parser loaded: three of this machine's manuals attached in one message,
"look things up" chosen where the page asks how to read them. The model's call comes back from
vLLM as `tool_calls` (the plugin's parse of the first turn, which the app holds to one call in
GLM-4's format), the app carries it out on the documents' text and sends the result back as a
`tool` message, the model's next turn is the answer, streamed; the page shows the lookup as a step
(what was asked, what was read back) and the passages the answer cites beside it. The demo model
never cites by itself: the proxy has the last answer end with a citation."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from glm1m.chainlit_app.lookups import fenced
from tests.app.test_real_manuals_set import LARGE, MIME, SETTINGS, SMALL, passages, present, shown
from tests.conftest import App, ModelServer, started_app
from tests.support.chainlit_client import ChainlitSession
from tests.support.citing_proxy import CitingProxy
from tests.support.fault_proxy import FaultProxy
from tests.support.service import free_port

pytestmark = pytest.mark.app


def carries_results(body: bytes) -> bool:
    return b'"role":"tool"' in body.replace(b'"role": "tool"', b'"role":"tool"')


class AnswerCitingProxy(CitingProxy):
    """Cites in the answer only, the turn that reads the lookups' results: the first turn is the
    call, which must stay as the model wrote it."""

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if not carries_results(body):
            return await FaultProxy._forward(self, request)  # noqa: SLF001 - as it is
        return await super()._forward(request)


@pytest.fixture(scope="module")
def lookup_app(model_server: ModelServer, log_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    proxy = AnswerCitingProxy(model_server.root, free_port())
    proxy.start()
    try:
        # A low threshold: the page asks how to read the three (~3,400 tokens), as it asks past
        # 128,000 tokens by default.
        yield from started_app("chainlit-lookup", model_server, proxy, log_dir,
                               tmp_path_factory.mktemp("lookup-data"), GLM1M_WHOLE_DOCUMENT_THRESHOLD="500",
                               GLM1M_LOOKUP_CALLS="2", GLM1M_API_KEY=model_server.api_key)
    finally:
        proxy.close()


def steps(chat: ChainlitSession, start: int) -> dict[str, dict]:
    """The tool steps shown since `start`, by id, as last updated."""
    found: dict[str, dict] = {}
    for event in chat.events[start:]:
        if event.name in ("new_message", "update_message") and event.data.get("type") == "tool":
            found[event.data["id"]] = {**found.get(event.data["id"], {}), **event.data}
    return found


async def choosing_look_up(app: App) -> tuple[ChainlitSession, list[list[str]]]:
    """A chat that answers the page's strategy question with "look-up"; the offers it saw, in order."""
    chat = app.session()
    await chat.connect()
    await chat.started()
    await chat.change_settings(SETTINGS)
    offered: list[list[str]] = []

    def look_up(actions: list[dict]) -> dict:
        offered.append([a["payload"]["strategy"] for a in actions])
        return next(a for a in actions if a["payload"]["strategy"] == "look-up")

    chat.choose_action = look_up  # type: ignore[method-assign]
    return chat, offered


async def test_three_manuals_looked_up_show_each_lookup_and_cite_what_was_read(lookup_app: App) -> None:
    chat, offered = await choosing_look_up(lookup_app)
    proxy = lookup_app.proxy
    assert isinstance(proxy, CitingProxy)
    proxy.reset()
    proxy.cite_next("[B § 1]")
    start = chat.mark()
    refs = [await chat.upload(path, mime=MIME[path.suffix]) for path in present(SMALL)]
    await chat.send("Which program prints columns?", refs)
    # Past the threshold the page asks how to read them; the client takes "look things up".
    asked = await chat.wait_for(lambda e: e.name == "ask", 120, start)
    assert "or look things up (the model finds and reads the pages" in asked.data["msg"]["output"]
    done = await chat.wait_for(lambda e: e.name == "update_message"
                               and "Looked things up in" in (e.data.get("output") or ""), 300, start)
    await chat.wait_for(lambda e: e.name == "task_end", 300, chat.index(done))
    assert not any(m.get("isError") for m in chat.messages(start)), chat.messages(start)
    assert offered == [["map-reduce", "whole", "look-up"]]  # the default (past the threshold) first
    assert any("Reading it by looking things up" in line for line in shown(chat, start))

    # What went to vLLM and came back: the first turn's call, parsed by the plugin.
    sent = [(request, body) for request, body in proxy.journal if "messages" in request]
    first, answer = sent[0][0], sent[-1][0]
    assert [t["function"]["name"] for t in first["tools"]] == ["find_passages", "read_location"]
    assert "structured_outputs" in first
    assert first["messages"][-1]["content"].startswith("Documents:\n- A README.md")
    calls = [json.loads(line[6:])["choices"][0]["delta"].get("tool_calls")
             for line in sent[0][1].decode().splitlines() if line.startswith("data: {")]
    made = [c for chunk in calls if chunk for c in chunk]
    assert made and made[0]["function"]["name"] in ("find_passages", "read_location")

    # The app's answer to the call went back as a tool message, and the page shows it as a step.
    results = [m for m in answer["messages"] if m["role"] == "tool"]
    assert results and answer["messages"][2]["tool_calls"][0]["id"] == results[0]["tool_call_id"]
    shown_steps = list(steps(chat, start).values())
    assert len(shown_steps) == len(results), shown_steps
    # The documents' text as a block of its own; a lookup that read nothing says why (in English here).
    assert shown_steps[0]["output"] in (results[0]["content"], fenced(results[0]["content"]))
    assert shown_steps[0]["name"].startswith(("Find: ", "Read: "))
    assert json.loads(made[0]["function"]["arguments"]) in ({"words": shown_steps[0]["input"]},
                                                            {"location": shown_steps[0]["input"]})

    # The answer streamed after the lookups, its citation opened beside it, the record said.
    assert any(e.name == "stream_start" for e in chat.events[start:])
    beside = passages(chat, start)
    assert set(beside) == {"B § 1"}, sorted(beside)
    assert (await chat.download(beside["B § 1"])).decode().startswith("**B · col.txt · § 1")
    assert any("Looked things up in **A (README.md), B (col.txt) and C (README.html)**: "
               f"{len(results)} lookup" in line for line in shown(chat, start)), shown(chat, start)
    await chat.close()


async def test_manuals_past_the_served_context_are_offered_parts_or_lookups_not_whole(
        lookup_app: App) -> None:
    # Two PDF manuals and an HTML one, ~30,000 tokens against the demo's 8,192: no whole read to
    # offer or announce; looked up, the answer comes without reading them part by part.
    chat, offered = await choosing_look_up(lookup_app)
    start = chat.mark()
    refs = [await chat.upload(path, mime=MIME[path.suffix]) for path in present(LARGE)]
    await chat.send("Where is the licence?", refs)
    asked = await chat.wait_for(lambda e: e.name == "ask", 300, start)
    question = asked.data["msg"]["output"]
    assert "longer than the served context, so it cannot be read whole" in question
    assert "the model reads all" not in question  # no whole read's wait announced
    done = await chat.wait_for(lambda e: e.name == "update_message"
                               and "Looked things up in" in (e.data.get("output") or ""), 300, start)
    await chat.wait_for(lambda e: e.name == "task_end", 300, chat.index(done))
    assert offered == [["map-reduce", "look-up"]]
    assert not any(m.get("isError") for m in chat.messages(start)), chat.messages(start)
    assert steps(chat, start) and not any("part by part" in line for line in shown(chat, start))
    await chat.close()
