"""Several documents in one chat, in the real app over its socket, on the real server: two in one
message are read together and the answer's passages name both; a third attached later joins the
set, its first two served from vLLM's prefix cache; the reopened chat reopens its whole set with
the prompt of before, byte for byte; another user reaches none of it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import socketio

from tests.conftest import PRODUCTION_USERS, App, ModelServer, started_app
from tests.support.chainlit_client import ChainlitSession
from tests.support.citing_proxy import CitingProxy
from tests.support.fault_proxy import FaultProxy
from tests.support.metrics import scrape
from tests.support.pdfs import make_pdf, words_page
from tests.support.service import free_port

pytestmark = pytest.mark.app
HITS = "vllm:prefix_cache_hits_total"
SETTINGS = {"system_prompt": "", "temperature": 0.0, "max_tokens": 48}


@pytest.fixture(scope="module")
def citing_app(model_server: ModelServer, log_dir: Path,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The demo app behind a proxy that can have the server's next answer end with a citation
    (tests/support/citing_proxy.py): the demo model never cites by itself."""
    proxy = CitingProxy(model_server.root, free_port())
    proxy.start()
    try:
        yield from started_app("chainlit-sets", model_server, proxy, log_dir,
                               tmp_path_factory.mktemp("sets-data"), GLM1M_API_KEY=model_server.api_key)
    finally:
        proxy.close()


@pytest.fixture(scope="module")
def parts_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The demo app with a threshold of 200 tokens and parts of 256: a set of two short PDFs is
    read part by part (map-reduce) by default, in several parts, with short notes."""
    yield from started_app("chainlit-set-parts", model_server, fault_proxy, log_dir,
                           tmp_path_factory.mktemp("set-parts-data"), GLM1M_WHOLE_DOCUMENT_THRESHOLD="200",
                           GLM1M_MAP_CHUNK_TOKENS="256", GLM1M_MAP_NOTE_TOKENS="16",
                           GLM1M_API_KEY=model_server.api_key)


@pytest.fixture
async def chat(citing_app: App) -> Iterator[ChainlitSession]:
    session = citing_app.session()
    await session.connect()
    await session.started()
    yield session
    await session.close()


def pdfs(folder: Path, *names: str) -> list[Path]:
    """A two-page PDF for each name, with words no other run has (the shelf outlives a test)."""
    unique = uuid.uuid4().hex[:12]
    return [make_pdf(folder / name, [f"{name} {unique} " + words_page(n + 2 * i, 150) for n in (1, 2)])
            for i, name in enumerate(names)]


def shown(chat: ChainlitSession, start: int) -> list[str]:
    return [e.data.get("output") or "" for e in chat.events[start:]
            if e.name in ("new_message", "update_message")]


async def ask_with(chat: ChainlitSession, question: str, files: list[Path]) -> int:
    refs = [await chat.upload(path, mime="application/pdf") for path in files]
    start = await chat.ask(question, file_refs=refs, timeout=300)
    assert not any(m.get("isError") for m in chat.messages(start)), chat.messages(start)
    assert streamed(chat, start), shown(chat, start)
    return start


def streamed(chat: ChainlitSession, start: int) -> bool:
    """An answer was streamed (the status lines are assistant messages too)."""
    return any(e.name == "stream_start" for e in chat.events[start:])


def passages(chat: ChainlitSession, start: int) -> dict[str, dict]:
    """The side elements beside answers since `start`, by name (not the attached files)."""
    return {e.data["name"]: e.data for e in chat.events[start:]
            if e.name == "element" and e.data.get("display") == "side" and e.data.get("type") == "text"}


def set_tokens(lines: list[str]) -> int:
    """The tokens the budget line says the set has ("2 documents, 4 pages, 1,234 tokens — …")."""
    found = next(re.search(r"documents, \d+ pages, ([\d,]+) tokens", line) for line in lines
                 if re.search(r"documents, \d+ pages, ([\d,]+) tokens", line))
    assert found is not None
    return int(found.group(1).replace(",", ""))


async def test_two_documents_in_one_message_are_read_together_and_the_passages_name_both(
        citing_app: App, chat: ChainlitSession, tmp_path: Path) -> None:
    await chat.change_settings(SETTINGS)
    contract, annex = pdfs(tmp_path, "contract.pdf", "annex.pdf")
    assert isinstance(citing_app.proxy, CitingProxy)
    citing_app.proxy.cite_next("[A p. 2] and [B p. 1]")
    start = await ask_with(chat, "Which document names the fees?", [contract, annex])
    lines = shown(chat, start)
    assert any("Reading **contract.pdf**" in line for line in lines)
    assert any("Reading **annex.pdf**" in line for line in lines)
    assert any("**A (contract.pdf) and B (annex.pdf)**: 2 documents, 4 pages, " in line
               and "Reading it whole" in line for line in lines), lines
    assert not any("not read" in line for line in lines)  # none left out
    beside = passages(chat, start)
    assert set(beside) == {"A p. 2", "B p. 1"}, beside
    assert (await chat.download(beside["A p. 2"])).decode().startswith("**A · contract.pdf · p. 2**")
    assert (await chat.download(beside["B p. 1"])).decode().startswith("**B · annex.pdf · p. 1**")


async def test_a_document_attached_later_joins_the_set_and_the_first_two_come_from_the_cache(
        citing_app: App, chat: ChainlitSession, tmp_path: Path) -> None:
    await chat.change_settings(SETTINGS)
    contract, annex, letter = pdfs(tmp_path, "contract.pdf", "annex.pdf", "letter.pdf")
    two = set_tokens(shown(chat, await ask_with(chat, "What is this?", [contract, annex])))
    hits = scrape(citing_app.server.root)[HITS]
    assert isinstance(citing_app.proxy, CitingProxy)
    citing_app.proxy.cite_next("[C p. 1]")
    start = await ask_with(chat, "And the letter?", [letter])
    lines = shown(chat, start)
    assert any("**A (contract.pdf), B (annex.pdf) and C (letter.pdf)**: 3 documents, 6 pages, " in line
               for line in lines), lines
    three = set_tokens(lines)
    served = scrape(citing_app.server.root)[HITS] - hits
    assert 0.9 * two <= served < three  # A and B from the cache; C read now
    assert list(passages(chat, start)) == ["C p. 1"]


async def test_a_set_past_the_threshold_is_read_part_by_part_across_its_documents(
        parts_app: App, healthy_proxy, tmp_path: Path) -> None:
    chat = parts_app.session()
    await chat.connect()
    await chat.started()
    await chat.change_settings(SETTINGS)
    contract, annex = pdfs(tmp_path, "contract.pdf", "annex.pdf")
    start = chat.mark()
    refs = [await chat.upload(path, mime="application/pdf") for path in (contract, annex)]
    await chat.send("What do they say?", refs)
    # Past the threshold the page asks how to read them (the client takes the first: the default).
    asked = await chat.wait_for(lambda e: e.name == "ask", 120, start)
    assert "2 documents, 4 pages, " in asked.data["msg"]["output"], asked.data
    done = await chat.wait_for(lambda e: e.name == "update_message"
                               and "part by part:" in (e.data.get("output") or ""), 300, start)
    record = done.data["output"]
    assert record.startswith("Read **A (contract.pdf) and B (annex.pdf)** part by part: "), record
    assert int(re.search(r"part by part: (\d+) parts", record).group(1)) >= 2
    await chat.wait_for(lambda e: e.name == "task_end", 300, chat.index(done))
    assert streamed(chat, start) and not any(m.get("isError") for m in chat.messages(start))
    prompts = [str(request["messages"]) for request, _ in healthy_proxy.journal]
    assert any("[A p. 1]" in p for p in prompts) and any("[B p. 2]" in p for p in prompts)
    assert "Notes taken part by part from the document A (contract.pdf) and B (annex.pdf)" in prompts[-1]
    await chat.close()


async def test_a_reopened_chat_reopens_its_set_with_the_prompt_of_before(
        production_app: App, healthy_proxy, tmp_path: Path) -> None:
    first = production_app.session()
    await first.connect()
    await first.started()
    await first.change_settings(SETTINGS)
    contract, annex, letter = pdfs(tmp_path, "contract.pdf", "annex.pdf", "letter.pdf")
    healthy_proxy.reset()
    await ask_with(first, "What is on page 2?", [contract, annex])
    before = healthy_proxy.journal[-1][0]["messages"]
    thread_id = next(m["threadId"] for m in first.messages() if m.get("threadId"))
    await first.close()

    resumed = production_app.session(thread_id)
    await resumed.connect()
    await resumed.wait_for(lambda e: e.name == "resume_thread", 60)
    await resumed.change_settings(SETTINGS)
    healthy_proxy.reset()
    start = await resumed.ask("And page 1?", timeout=300)
    assert streamed(resumed, start) and not any(m.get("isError") for m in resumed.messages(start))
    after = healthy_proxy.journal[-1][0]["messages"]
    # The same documents, byte for byte (vLLM's prefix cache serves them), then the new question.
    assert after[:-1] == before[:-1] and len(after) == len(before) == 2
    assert after[-1]["content"] == before[-1]["content"].removesuffix("What is on page 2?") + "And page 1?"
    await ask_with(resumed, "And the letter?", [letter])  # joins the reopened set as C
    joined = healthy_proxy.journal[-1][0]["messages"][-1]["content"]
    assert joined.startswith(before[-1]["content"].removesuffix("\n\nQuestion: What is on page 2?"))
    assert '<document label="C" name="letter.pdf">' in joined
    await resumed.close()


async def test_another_user_reaches_none_of_alices_set(production_app: App, healthy_proxy,
                                                        tmp_path: Path) -> None:
    alice = production_app.session()
    await alice.connect()
    await alice.started()
    await alice.change_settings(SETTINGS)
    contract, annex = pdfs(tmp_path, "contract.pdf", "annex.pdf")
    await ask_with(alice, "What is this?", [contract, annex])
    thread_id = next(m["threadId"] for m in alice.messages() if m.get("threadId"))
    await alice.close()
    bob_login = ("bob", PRODUCTION_USERS["bob"])
    with pytest.raises(socketio.exceptions.ConnectionError):  # her chat, and its set, are not his
        await production_app.session(thread_id, login=bob_login).connect()
    bob = production_app.session(login=bob_login)
    await bob.connect()
    await bob.started()
    await bob.change_settings(SETTINGS)
    healthy_proxy.reset()
    await bob.ask("What is in the documents?")  # a plain chat: no set of hers behind it
    assert "<document" not in str(healthy_proxy.journal[-1][0]["messages"])
    lines = shown(bob, await ask_with(bob, "What is this?", [contract]))  # her shelf is not his
    assert any("Reading **contract.pdf**" in line for line in lines)
    assert not any("on the shelf" in line for line in lines)
    await bob.close()
