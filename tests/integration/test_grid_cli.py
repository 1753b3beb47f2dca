"""`glm1m grid` on the real demo server (served context 8,192): three real manuals of this machine
× two questions, one typed (a number, asked with its JSON schema as vLLM's structured outputs).
Every cell is filled or marked, the XLSX opens with its sheets, and each document's second
question finds the document in vLLM's prefix cache (its /metrics counters)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from openpyxl import load_workbook

from glm1m.documents.budget import measure
from glm1m.documents.formats import read_document
from glm1m.llm import LlmClient
from glm1m.settings import Settings
from tests.integration.test_summarize_set import MANUALS, glm1m
from tests.support.metrics import scrape

pytestmark = pytest.mark.server
HITS = "vllm:prefix_cache_hits_total"


async def tokens_of(path: Path, base_url: str) -> int:
    llm = LlmClient(Settings(base_url=base_url, retries=0))
    try:
        return (await measure(read_document(path), llm, threshold=100_000)).tokens
    finally:
        await llm.aclose()


async def test_a_grid_of_real_manuals_fills_or_marks_every_cell_and_hits_the_prefix_cache(
        model_server, tmp_path: Path) -> None:
    missing = [str(path) for path in MANUALS if not path.is_file()]
    assert not missing, f"`make system-tools` installs these manuals' packages; missing: {missing}"
    questions = tmp_path / "questions.csv"
    with questions.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["name", "question", "type"],
                                 ["program", "Which program does this document describe?", ""],
                                 ["year", "In which year was it first released?", "number"]])
    tokens = [await tokens_of(path, model_server.base_url) for path in MANUALS]
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data")}
    out = tmp_path / "grid.xlsx"
    before = scrape(model_server.root)[HITS]
    # One document at a time: another's prompts never evict this one's prefix between its questions.
    done = glm1m("grid", *map(str, MANUALS), "--questions", str(questions), "-o", str(out),
                 "--concurrency", "1", "--max-tokens", "48", "--base-url", model_server.base_url,
                 env=env)
    hits = scrape(model_server.root)[HITS] - before
    print(done.stderr.splitlines()[-2:], f"prefix-cache hits {hits:,.0f}, documents' tokens {tokens}")
    assert done.returncode in (0, 1), done.stderr  # 1: some cell marked (the demo model answers noise)
    assert "6 cells: " in done.stderr and "asking" in done.stderr, done.stderr
    book = load_workbook(out)
    assert book.sheetnames == ["grid", "passages", "problems"]
    grid = [list(row) for row in book["grid"].iter_rows(values_only=True)]
    assert grid[0] == ["document", "program", "year"]
    assert [row[0] for row in grid[1:]] == [path.name for path in MANUALS]
    for row in grid[1:]:
        assert all(cell and str(cell).strip() for cell in row[1:]), row  # filled, or "⚠ …"
    marked = sum(str(cell).startswith("⚠ ") for row in grid[1:] for cell in row[1:])
    assert (done.returncode == 1) == (marked > 0)
    assert len(list(book["problems"].iter_rows())) - 1 >= marked
    # Each document's second question read its document from the cache: at least 90 % of each.
    assert hits >= 0.9 * sum(tokens), (hits, tokens)
    assert not (tmp_path / "grid.xlsx.progress.jsonl").exists() or done.returncode == 1
