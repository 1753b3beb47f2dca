"""A document this server has read before says so instead of announcing the whole prefill: on one
H200 a 1M-token document asked again was told "about 9 minutes" and answered in 8 s and 25 s
(issue 27). The shelf notes which server read which document whole, once its answer began."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from glm1m.cli import summarize as cli, waiting
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import Shelf
from glm1m.documents.through_shelf import noting_read, read_through, sending
from glm1m.llm import ChatParams
from glm1m.serving import PrefillClock
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm

TEXT = "# Terms\n\nThe tenant pays on the first day of each month.\n\n# Notice\n\nThree months.\n"
URL = "http://gpu-1:8000/v1"


class ClosingLlm(ScriptedLlm):
    async def aclose(self) -> None:
        pass


async def test_a_document_is_noted_as_read_by_a_server_only_once_its_answer_began(tmp_path: Path) -> None:
    path = tmp_path / "lease.md"
    path.write_text(TEXT, encoding="utf-8")
    shelf = Shelf.of(tmp_path / "data", 100)
    shelved, _ = await read_through(shelf, path, "lease.md", ReadOptions())
    llm = ScriptedLlm()
    to = await sending(shelf, shelved, llm, "glm", URL)
    assert to.before is None

    async def stopped_before_the_answer():
        return
        yield ""  # pragma: no cover

    assert [p async for p in noting_read(to, stopped_before_the_answer())] == []
    assert (await sending(shelf, shelved, llm, "glm", URL)).before is None
    pieces = llm.stream_chat([{"role": "user", "content": "what is due?"}], ChatParams(0.0, 64))
    assert "".join([p async for p in noting_read(to, pieces)]) == "WHAT IS DUE?"
    assert (await sending(shelf, shelved, llm, "glm", URL)).before is not None
    # Another address, or another deployment at this one, never held it.
    assert (await sending(shelf, shelved, llm, "glm", "http://gpu-2:8000/v1")).before is None
    llm.context = 1_048_576
    assert (await sending(shelf, shelved, llm, "glm", URL)).before is None


def test_the_revisit_sentence_says_seconds_if_held_and_the_full_read_otherwise() -> None:
    clock = PrefillClock(None)
    said = clock.describe_wait(1_000_000, read_before="2026-12-01 23:40")
    assert said.startswith("This server read this document before (2026-12-01 23:40): if it still "
                           "holds it, the answer starts in seconds; reading all 1,000,000 tokens again")
    assert "about 8 minutes (an estimate for one H200)" in said
    line = waiting.waiting_line("A.txt", 1_000_000, 5.0, clock, read_before=True)
    assert line.startswith("asking A.txt again (1,000,000 tokens): 0:05 so far; this server read it "
                           "before, so the answer starts in seconds if it still holds it, else about ")
    assert "an estimate for one H200" in line


async def test_summarize_a_second_time_says_the_server_read_it_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lease.md"
    path.write_text(TEXT, encoding="utf-8")
    monkeypatch.setattr("glm1m.llm.LlmClient", lambda settings: ClosingLlm(context=32_768))
    settings = Settings(data_dir=tmp_path / "data", base_url=URL)
    args = argparse.Namespace(pdf=path, ocr=None, question="What is due?", strategy="whole", user=None)

    await cli.summarize(args, settings)
    first = capsys.readouterr()
    assert "Until the first answer starts" in first.err and "read this document before" not in first.err
    await cli.summarize(args, settings)
    again = capsys.readouterr()
    assert "This server read this document before (" in again.err
    assert "Until the first answer starts" not in again.err and again.out == first.out
    # Another server has not read it.
    await cli.summarize(args, Settings(data_dir=tmp_path / "data", base_url="http://gpu-2:8000/v1"))
    assert "Until the first answer starts" in capsys.readouterr().err



def test_both_doors_say_the_revisit_with_one_entry_in_either_language() -> None:
    """One fact, one entry: the CLI's describe_wait and the page's choice of strategy both render
    wait_revisit, the CLI naming "this document", the page the document's name."""
    from glm1m.catalog import ZH, render, said

    clock = PrefillClock(None)
    for lang, cli_start, page_start in (
            ("en", "This server read this document before (2026-12-01 23:40): ",
             "This server read A.txt before (2026-12-01 23:40): "),
            (ZH, "此服务器之前读过这篇文档（2026-12-01 23:40）：", "此服务器之前读过 A.txt（2026-12-01 23:40）：")):
        assert clock.describe_wait(1_000_000, read_before="2026-12-01 23:40", lang=lang).startswith(cli_start)
        page = render(lang, "wait_revisit", what=said("wait_what_named", name="A.txt"),
                      before="2026-12-01 23:40", when=said("wait_no_estimate"), tokens=1_000_000)
        assert page.startswith(page_start)
