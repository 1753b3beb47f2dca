"""Read vLLM's Prometheus metrics, and wait for one to reach a value."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx
from prometheus_client.parser import text_string_to_metric_families


def scrape(root: str) -> dict[str, float]:
    """Sample name -> value, summed over label sets (one engine, one model here)."""
    text = httpx.get(f"{root}/metrics", timeout=10).text
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    return values


def eventually(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll a metric until `check` holds. Metrics have no push event, so this is a bounded poll."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


def running(root: str) -> float:
    return scrape(root).get("vllm:num_requests_running", 0.0)
