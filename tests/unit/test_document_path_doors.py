"""Both doors on the one document path say the same estimate of a whole read (serving.PrefillClock),
and `glm1m summarize` reads its settings when it runs, not while the parser is built."""

from __future__ import annotations

import argparse

import pytest

from glm1m.chainlit_app import document_flow
from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.cli import summarize
from glm1m.serving import PrefillClock, Served
from glm1m.settings import Settings

TOKENS = 1_000_000


def h200s(tp: int) -> Served:
    return Served(model="glm", gpu="NVIDIA H200", gpus=tp, tensor_parallel=tp, layout="tensor",
                  profile="auto", max_model_len=1_048_576)


@pytest.mark.parametrize(("served", "minutes", "where", "where_zh"), [
    (None, "about 8 minutes", "an estimate for one H200", "一块 H200"),  # a server glm1m did not start
    (h200s(2), "about 4 minutes", "an estimate for 2× H200", "2 块 H200"),
], ids=["unknown server", "two H200s"])
def test_the_page_and_the_cli_give_the_same_estimate(monkeypatch: pytest.MonkeyPatch, served: Served | None,
                                                     minutes: str, where: str, where_zh: str) -> None:
    clock = PrefillClock(served)
    monkeypatch.setattr(document_flow, "prefill_clock", lambda: clock)
    cli = clock.describe_wait(TOKENS)
    page = document_flow.wait_tail(EN, TOKENS, 0)
    assert f"{minutes} ({where})" in cli and page == f"{minutes} left ({where})"
    assert where_zh in document_flow.wait_tail(ZH, TOKENS, 0) and where_zh in clock.describe_wait(TOKENS, lang=ZH)


def test_a_server_with_no_estimate_has_none_on_either_door(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = PrefillClock(Served(model="glm", gpu="cpu", gpus=0, tensor_parallel=1, layout="data",
                                profile="auto", max_model_len=32_768))
    monkeypatch.setattr(document_flow, "prefill_clock", lambda: clock)
    assert "no estimate yet for this server" in clock.describe_wait(20_000)
    assert document_flow.wait_tail(EN, 20_000, 0) == "no estimate yet for this server"


def test_summarize_reads_its_settings_when_it_runs_not_when_its_parser_is_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[Settings] = []

    async def summarized(args: argparse.Namespace, settings: Settings) -> None:
        ran.append(settings)

    monkeypatch.setattr(summarize, "summarize", summarized)
    monkeypatch.setenv("GLM1M_MAP_CONCURRENCY", "abc")  # Settings() would raise: none is built here
    commands = argparse.ArgumentParser().add_subparsers()
    summarize.add_command(commands)
    args = commands.choices["summarize"].parse_args(["report.pdf", "--max-tokens", "77"])
    monkeypatch.delenv("GLM1M_MAP_CONCURRENCY")
    monkeypatch.setenv("GLM1M_BASE_URL", "http://gpu-9:8000/v1")  # set after the parser was built
    assert summarize.cmd_summarize(args) == 0
    assert (ran[0].max_tokens, ran[0].base_url) == (77, "http://gpu-9:8000/v1")
