"""Real manuals of this machine attached together in one message on the page (issue 25, item 3),
through the real app on the demo server (served context 8,192): three small ones (Markdown, text,
HTML) are read whole; two PDF manuals and an HTML one, about 30,000 tokens, are read part by part.
Either way the page names the three as A, B and C, and the answer's passages carry each one's
letter and name. The demo model never cites by itself: a proxy has the server's answer end with
a citation (tests/support/citing_proxy.py); in a part-by-part read, the answer and not the notes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.conftest import App, ModelServer, started_app
from tests.support.chainlit_client import ChainlitSession
from tests.support.citing_proxy import CitingProxy
from tests.support.fault_proxy import FaultProxy
from tests.support.service import free_port

pytestmark = pytest.mark.app
SETTINGS = {"system_prompt": "", "temperature": 0.0, "max_tokens": 48}
# Installed by `make system-tools` (the Makefile's MANUAL_PACKAGES), as the three below.
SMALL = [Path("/usr/share/doc/psmisc/README.md"), Path("/usr/share/doc/util-linux/col.txt"),
         Path("/usr/share/doc/libjson-c5/README.html")]
# libtasn1-doc's and shared-mime-info's PDF manuals (36 and 17 pages) and libjson-c5's README.
LARGE = [Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf"),
         Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf"),
         Path("/usr/share/doc/libjson-c5/README.html")]
MIME = {".pdf": "application/pdf", ".md": "text/markdown", ".txt": "text/plain", ".html": "text/html"}
# The streamed requests of a part-by-part read that are not the answer: a part's notes, and notes
# combined into shorter ones (glm1m/documents/mapreduce.py's note_prompt and combine_prompt).
NOT_THE_ANSWER = (b"Write short notes, with ", b"Combine these notes into shorter notes")


class FinalCitingProxy(CitingProxy):
    """Cites in the answer only: a part-by-part read streams its parts' notes too, which would
    take the citation first."""

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        if any(marker in body for marker in NOT_THE_ANSWER):
            return await FaultProxy._forward(self, request)  # noqa: SLF001 - notes, as they are
        return await super()._forward(request)


@pytest.fixture(scope="module")
def manuals_app(model_server: ModelServer, log_dir: Path,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    proxy = FinalCitingProxy(model_server.root, free_port())
    proxy.start()
    try:
        yield from started_app("chainlit-manuals", model_server, proxy, log_dir,
                               tmp_path_factory.mktemp("manuals-data"), GLM1M_MAP_NOTE_TOKENS="16",
                               GLM1M_API_KEY=model_server.api_key)
    finally:
        proxy.close()


def present(paths: list[Path]) -> list[Path]:
    missing = [str(path) for path in paths if not path.is_file()]
    assert not missing, (f"These real manuals are not on this machine: {', '.join(missing)}. "
                         "`make system-tools` installs their packages (the Makefile's MANUAL_PACKAGES).")
    return paths


def shown(chat: ChainlitSession, start: int) -> list[str]:
    return [e.data.get("output") or "" for e in chat.events[start:]
            if e.name in ("new_message", "update_message")]


def passages(chat: ChainlitSession, start: int) -> dict[str, dict]:
    """The side elements beside answers since `start`, by name (not the attached files)."""
    return {e.data["name"]: e.data for e in chat.events[start:]
            if e.name == "element" and e.data.get("display") == "side" and e.data.get("type") == "text"}


async def attach_together(app: App, paths: list[Path], citation: str, timeout: float) -> tuple[
        ChainlitSession, int]:
    chat = app.session()
    await chat.connect()
    await chat.started()
    await chat.change_settings(SETTINGS)
    assert isinstance(app.proxy, CitingProxy)
    app.proxy.cite_next(citation)
    refs = [await chat.upload(path, mime=MIME[path.suffix]) for path in paths]
    start = await chat.ask("Which program does each manual describe?", file_refs=refs, timeout=timeout)
    assert not any(m.get("isError") for m in chat.messages(start)), chat.messages(start)
    assert any(e.name == "stream_start" for e in chat.events[start:]), shown(chat, start)
    return chat, start


async def cited_as_said(chat: ChainlitSession, start: int, expected: dict[str, str]) -> None:
    """The passages beside the answer are exactly `expected` (name → its first line)."""
    beside = passages(chat, start)
    assert set(beside) == set(expected), (sorted(beside), shown(chat, start)[-3:])
    for name, line in expected.items():
        text = (await chat.download(beside[name])).decode()
        assert text.startswith(f"**{line}"), (name, text[:200])


async def test_three_small_manuals_in_one_message_are_read_whole_and_cited_by_letter(
        manuals_app: App) -> None:
    chat, start = await attach_together(manuals_app, present(SMALL), "[A § 1], [B § 1] and [C § 1]", 300)
    lines = shown(chat, start)
    for path in SMALL:
        assert any(f"Reading **{path.name}**" in line for line in lines), lines
    assert any("**A (README.md), B (col.txt) and C (README.html)**: 3 documents, 17 sections, " in line
               and "Reading it whole" in line for line in lines), lines
    await cited_as_said(chat, start, {"A § 1": "A · README.md · § 1", "B § 1": "B · col.txt · § 1",
                                      "C § 1": "C · README.html · § 1"})
    await chat.close()


async def test_two_pdf_manuals_and_an_html_one_are_read_part_by_part_and_cited_by_letter(
        manuals_app: App) -> None:
    chat, start = await attach_together(manuals_app, present(LARGE), "[A p. 3], [B p. 2] and [C § 1]", 900)
    lines = shown(chat, start)
    name = "A (libtasn1.pdf), B (shared-mime-info-spec.pdf) and C (README.html)"
    assert any(f"**{name}**: 3 documents, 53 pages and 7 sections, " in line for line in lines), lines
    assert any(line.startswith(f"Read **{name}** part by part: ") for line in lines), lines
    await cited_as_said(chat, start, {"A p. 3": "A · libtasn1.pdf · p. 3",
                                      "B p. 2": "B · shared-mime-info-spec.pdf · p. 2",
                                      "C § 1": "C · README.html · § 1"})
    await chat.close()
