"""Whole-document and map-reduce answers against the real demo server (served context 8,192)."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glm1m.documents.answer import MapReduce, OpenDocument, answer
from glm1m.documents.mapreduce import chunk_room, fitted_chunks, note_prompt
from glm1m.documents.budget import Budget, Strategy, measure
from glm1m.documents.pages import cited_pages
from glm1m.documents.pdf import extract
from glm1m.documents.pages import DocumentText
from glm1m.documents.sets import DocumentSet
from glm1m.documents.split import split
from glm1m.errors import DocumentError
from glm1m.llm import ChatParams, Llm, LlmClient, text_of
from glm1m.progress import Stage
from glm1m.settings import Settings
from tests.conftest import ROOT
from tests.support.metrics import scrape
from tests.support.documents import make_docx
from tests.support.pdfs import make_pdf, words_page
from tests.support.service import Service

pytestmark = pytest.mark.server
PARAMS = ChatParams(temperature=0.0, max_tokens=32)
PLAN = MapReduce(chunk_tokens=2000, concurrency=4, note_tokens=24)


@pytest.fixture
async def llm(model_server) -> Llm:
    client = LlmClient(Settings(base_url=model_server.base_url, retries=0))
    yield client
    await client.aclose()


async def budget_for(pdf, llm: Llm) -> Budget:
    return await measure(pdf, llm, threshold=6000)


async def test_token_count_is_the_servers_own(tmp_path, llm: Llm) -> None:
    pdf = extract(make_pdf(tmp_path / "a.pdf", [words_page(n, 200) for n in range(1, 4)]))
    budget = await budget_for(pdf, llm)
    assert budget.tokens == await llm.count_text_tokens(pdf.marked_text() + "\n\n") or \
        abs(budget.tokens - await llm.count_text_tokens(pdf.marked_text())) <= 3
    assert budget.max_model_len == 8192 and budget.pages == 3


async def test_a_short_document_is_read_whole_and_follow_ups_hit_the_prefix_cache(
        model_server, tmp_path, llm: Llm) -> None:
    pdf = extract(make_pdf(tmp_path / "short.pdf", [words_page(n, 250) for n in range(1, 6)]))
    budget = await budget_for(pdf, llm)
    assert budget.default(PARAMS.max_tokens) is Strategy.WHOLE and 3000 < budget.tokens < 6000
    doc = OpenDocument(pdf, budget, Strategy.WHOLE, PLAN)
    ttft = []
    for question in ("What does page 2 say?", "And page 4?"):
        hits_before = scrape(model_server.root)["vllm:prefix_cache_hits_total"]
        started = time.perf_counter()
        stream = answer(doc, question, llm, PARAMS)
        await anext(stream)
        ttft.append(time.perf_counter() - started)
        await stream.aclose()
        hits = scrape(model_server.root)["vllm:prefix_cache_hits_total"] - hits_before
    # The follow-up's whole document prefix came from the cache, and its first token came sooner.
    assert hits >= 0.9 * budget.tokens
    assert ttft[1] < ttft[0]


async def test_past_the_served_context_only_map_reduce_is_offered_and_it_runs(
        model_server, tmp_path, llm: Llm) -> None:
    pdf = extract(make_pdf(tmp_path / "long.pdf", [words_page(n, 300) for n in range(1, 13)]))
    budget = await budget_for(pdf, llm)
    assert budget.tokens > budget.max_model_len
    assert budget.offered(PARAMS.max_tokens) == [Strategy.MAP_REDUCE, Strategy.LOOK_UP]  # not whole
    with pytest.raises(DocumentError, match="cannot be read whole"):
        budget.check(Strategy.WHOLE, PARAMS.max_tokens)
    doc = OpenDocument(pdf, budget, Strategy.MAP_REDUCE, PLAN)
    room = await chunk_room(pdf.name, "summary", llm, PLAN.note_tokens)
    chunks = await fitted_chunks(pdf, budget.chars / budget.tokens, room, PLAN.chunk_tokens, llm)
    assert len(chunks) > 5 and chunks[0].first_page == 1 and chunks[-1].last_page == 12
    assert all(a.last_page <= b.first_page for a, b in zip(chunks, chunks[1:]))
    before = scrape(model_server.root)["vllm:request_success_total"]
    stages = []
    text = text_of([p async for p in answer(
        doc, "summary", llm, PARAMS, lambda p: stages.append((p.stage, p.done, p.total)))])
    assert text
    assert scrape(model_server.root)["vllm:request_success_total"] - before == len(chunks) + 1
    for chunk in chunks:  # every part's prompt, by the server's own count, leaves room for its notes
        assert await llm.count_chat_tokens(note_prompt(pdf.name, chunk, "summary")) + PLAN.note_tokens \
            <= budget.max_model_len
    assert stages[-1] == (Stage.COMBINING, len(chunks), len(chunks))


def test_cited_pages_are_parsed_and_bounded() -> None:
    answer = "Costs rise [p. 3] and fall [p. 5-6]; see also [p. 99] and [p.3]."
    assert cited_pages(answer, page_count=10) == [3, 5, 6]


def test_chinese_sentences_split_at_their_ends(tmp_path) -> None:
    pdf = extract(make_pdf(tmp_path / "zh.pdf", ["合同条款第一条。" * 200, "第二页内容！" * 200], chinese=True))
    chunks = split(pdf, chunk_chars=300 * sum(len(p.text) for p in pdf.pages) // 2000)
    assert len(chunks) > 2
    assert all(c.text.rstrip().endswith(("。", "！", "]")) for c in chunks[:-1])


def test_summarize_cli_answers_any_format_and_refuses_what_it_cannot_read(model_server, tmp_path) -> None:
    make_pdf(tmp_path / "doc.pdf", [words_page(n, 300) for n in range(1, 3)])
    make_docx(tmp_path / "notes.docx", [(1, "Installation"), (0, "Run make setup first. " * 20),
                                        (1, "配置 Configuration"), (0, "设置 GLM1M_BASE_URL。" * 20)])
    for name, read in (("doc.pdf", "2 pages"), ("notes.docx", "2 sections")):
        ok = Service("summarize", [sys.executable, "-m", "glm1m.cli", "summarize", str(tmp_path / name),
                                   "--max-tokens", "16", "--base-url", model_server.base_url],
                     ready="Strategy", log_dir=tmp_path, cwd=str(ROOT))
        assert ok.wait_exit(120) == 0, ok.output()
        assert read in ok.output() and "Strategy: whole" in ok.output()
    (tmp_path / "notes.pdf").write_text("just text, not a PDF")
    bad = Service("summarize-bad", [sys.executable, "-m", "glm1m.cli", "summarize", str(tmp_path / "notes.pdf"),
                                    "--base-url", model_server.base_url], ready="x", log_dir=tmp_path, cwd=str(ROOT))
    assert bad.wait_exit(60) == 2
    lines = [line for line in bad.output().splitlines() if line.strip()]
    assert len(lines) == 1 and "not a PDF" in lines[0]


REAL_MANUAL = Path("/usr/share/doc/valgrind/valgrind_manual.pdf.gz")  # Debian's valgrind package


def test_summarize_answers_a_real_397_page_manual_many_times_the_served_context(
        model_server, tmp_path) -> None:
    """The valgrind manual: 397 real pages (prose, tables, code), ~710K tokens against an
    8,192-token server. Before map-reduce counted its parts, its denser parts overflowed the
    context and the command exited 2 with the chat's sentence."""
    pdf = tmp_path / "valgrind_manual.pdf"
    pdf.write_bytes(gzip.decompress(REAL_MANUAL.read_bytes()))
    run = Service("summarize-manual", [sys.executable, "-m", "glm1m.cli", "summarize", str(pdf),
                                       "--max-tokens", "16", "--base-url", model_server.base_url],
                  ready="Strategy", log_dir=tmp_path, cwd=str(ROOT),
                  env={**os.environ, "GLM1M_MAP_NOTE_TOKENS": "16", "GLM1M_MAP_CONCURRENCY": "4"})
    assert run.wait_exit(900) == 0, run.tail()
    log = run.output()
    assert "397 pages" in log and "Strategy: map-reduce" in log
    parts = int(re.search(r"reading: \d+ of (\d+) parts", log).group(1))
    assert parts > 80  # ~710K tokens in parts that fit 8,192 tokens with the prompt and notes
    assert re.search(rf"reading: {parts} of {parts} parts", log) and "Not read" not in log


def test_summarize_writes_the_answer_alone_to_stdout(healthy_proxy, tmp_path) -> None:
    """Progress goes to stderr; stdout is exactly what the model answered (it held a stray
    newline from the progress bar before the answer)."""
    make_pdf(tmp_path / "doc.pdf", [words_page(n, 200) for n in range(1, 3)])
    done = subprocess.run([sys.executable, "-m", "glm1m.cli", "summarize", str(tmp_path / "doc.pdf"),
                           "--max-tokens", "16", "--base-url", f"{healthy_proxy.url}/v1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == healthy_proxy.streamed_text() + "\n"
    assert "Strategy: whole" in done.stderr


def test_summarize_says_it_is_still_reading_until_the_answer_starts(healthy_proxy, tmp_path) -> None:
    """A whole document's first word can take ten minutes (the server reads all of it first, and
    sends nothing meanwhile): the CLI says how long so far, every GLM1M_WAIT_LINE_S off a
    terminal, and keeps those lines off stdout, which holds the answer alone."""
    make_pdf(tmp_path / "doc.pdf", [words_page(n, 200) for n in range(1, 3)])
    healthy_proxy.hold_next_stream(3.0)
    done = subprocess.run([sys.executable, "-m", "glm1m.cli", "summarize", str(tmp_path / "doc.pdf"),
                           "--strategy", "whole", "--max-tokens", "16", "--base-url", f"{healthy_proxy.url}/v1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "GLM1M_WAIT_LINE_S": "0.5"})
    assert done.returncode == 0, done.stderr
    waits = [line for line in done.stderr.splitlines() if "still reading doc.pdf" in line]
    assert len(waits) >= 4, done.stderr  # held 3 s, a line every 0.5 s
    so_far = [re.search(r"(\d+):(\d\d) so far", line).groups() for line in waits]
    assert so_far == sorted(so_far, key=lambda ms: (int(ms[0]), int(ms[1]))) and so_far[-1] >= ("0", "02")
    assert done.stdout == healthy_proxy.streamed_text() + "\n"


async def test_a_document_added_to_a_set_leaves_the_earlier_ones_in_the_prefix_cache(
        model_server, tmp_path, llm: Llm) -> None:
    """Asked with a third document, the set's first two are served from the cache, not read again."""
    def pdf(name: str, first: int) -> DocumentText:
        return extract(make_pdf(tmp_path / name, [words_page(n, 150) for n in (first, first + 1)]))
    two = DocumentSet((pdf("contract.pdf", 1), pdf("annex.pdf", 3)))
    three = two.with_document(pdf("letter.pdf", 5))
    hits = []
    for documents in (two, three):
        budget = await measure(documents.text(), llm, threshold=6000)
        assert budget.default(PARAMS.max_tokens) is Strategy.WHOLE
        doc = OpenDocument(documents.text(), budget, Strategy.WHOLE, PLAN)
        hits_before = scrape(model_server.root)["vllm:prefix_cache_hits_total"]
        stream = answer(doc, "Which document names clause3x0?", llm, PARAMS)
        await anext(stream)
        await stream.aclose()
        hits.append((scrape(model_server.root)["vllm:prefix_cache_hits_total"] - hits_before, budget.tokens))
    (_, two_tokens), (three_hits, three_tokens) = hits
    assert 0.9 * two_tokens <= three_hits < three_tokens
