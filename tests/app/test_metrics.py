"""Every metric the Grafana dashboard plots exists on the running servers, so a renamed metric
breaks this test rather than the dashboard."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import ROOT
from tests.support.chainlit_client import ChainlitSession
from tests.support.metrics import scrape

pytestmark = pytest.mark.app
DASHBOARD = ROOT / "server" / "monitoring" / "grafana-dashboard.json"
METRIC = re.compile(r"\b(vllm:[a-z_:]+|glm1m_[a-z_]+)")


def dashboard_metrics() -> set[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return {m for p in panels for t in p["targets"] for m in METRIC.findall(t["expr"])}


def test_dashboard_metrics_all_exist(app, chat: ChainlitSession) -> None:
    wanted = dashboard_metrics()
    assert {"vllm:kv_cache_usage_perc", "vllm:prefix_cache_hits_total", "glm1m_rows_translated_total"} <= wanted
    served = set(scrape(app.server.root)) | set(scrape(app.metrics_url))
    missing = {m for m in wanted if m not in served}
    assert not missing, f"the dashboard plots metrics nobody exports: {sorted(missing)}"


def test_prometheus_config_scrapes_both_servers() -> None:
    config = (ROOT / "server" / "monitoring" / "prometheus.yml").read_text()
    assert '"127.0.0.1:8000"' in config and '"127.0.0.1:8002"' in config


async def test_app_counts_chat_answers_and_failures(app, chat: ChainlitSession) -> None:
    before = scrape(app.metrics_url)
    await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 16})
    await chat.ask("hello")
    app.proxy.fail_next(6, status=503)
    await chat.ask("again")
    after = scrape(app.metrics_url)
    assert after["glm1m_chat_answers_total"] == before["glm1m_chat_answers_total"] + 1
    assert after.get("glm1m_failures_total", 0) >= before.get("glm1m_failures_total", 0) + 1
