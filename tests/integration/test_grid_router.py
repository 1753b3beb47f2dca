"""`glm1m grid` behind `glm1m router`, in front of the two real demo servers of test_router.py
(issue 36): six documents × three questions. Each document's requests carry one session key, so
its questions after the first land on the replica that read it, prefix-cache hits there, while
documents spread over both replicas; each replica's own /metrics says which did the work.

Half the documents are shorter than the opening glm1m's client keys a prompt by (AFFINITY_CHARS):
each of their prompts' own opening holds its question, and keyed by it their questions went to
a replica each (sticky_least_loaded gives every new key to the one holding fewer), each reading
the document again. A whole-document question is keyed by its document (answer.document_key)."""

from __future__ import annotations

import asyncio
import itertools
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from openpyxl import load_workbook

from glm1m.affinity import key_of_messages
from glm1m.catalog import EN
from glm1m.documents.answer import whole_prompt
from glm1m.documents.budget import measure
from glm1m.documents.formats import ReadOptions, read_document
from glm1m.documents.shelf import Shelf
from glm1m.grid.cells import Asking, params_of
from glm1m.grid.job import run_grid
from glm1m.grid.questions import Question
from glm1m.llm import LlmClient
from glm1m.progress import Progress
from glm1m.settings import Settings
from tests.integration.test_summarize_set import glm1m
from tests.support.router_stack import RouterStack, client_settings, delta, started_stack

pytestmark = pytest.mark.server
SUCCESS, HITS = "vllm:request_success_total", "vllm:prefix_cache_hits_total"
DOCUMENTS, QUESTIONS = 6, 3
WORDS = ("clause", "party", "term", "notice", "tenant", "landlord")


@pytest.fixture(scope="module")
def router_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RouterStack]:
    """Two demo servers and the router of their own, stopped after this module's tests: its
    documents' keys never tip another module's router, nor do theirs this one's."""
    with started_stack(tmp_path_factory) as stack:
        yield stack


def write_documents(folder: Path, seed: str) -> list[Path]:
    """Six Markdown documents, different for each seed (and from test_router.py's): the even ones
    two sections, ~2,000 characters (~1,400 of the demo model's tokens), the odd ones five."""
    folder.mkdir()
    paths = []
    for d in range(DOCUMENTS):
        rng = random.Random(f"grid-{seed}-{d}")
        sections = 2 if d % 2 == 0 else 5
        text = "".join(f"# Part {n}\n\n" + " ".join(f"{rng.choice(WORDS)}{rng.randint(0, 999)}"
                                                    for _ in range(110)) + "\n\n"
                       for n in range(1, sections + 1))
        paths.append(folder / f"doc{d}.md")
        paths[-1].write_text(text, encoding="utf-8")
    return paths


async def tokens_of(paths: list[Path], settings: Settings) -> list[int]:
    """Each document's tokens as the servers count them; the short ones checked to be short."""
    llm = LlmClient(settings)
    try:
        counts = []
        for d, path in enumerate(paths):
            text = read_document(path)
            opening = [whole_prompt(text, q) for q in ("Who are the parties?", "Which term?")]
            # Keyed by each prompt's own opening, the two questions of a short one would differ.
            assert (key_of_messages(opening[0]) != key_of_messages(opening[1])) == (d % 2 == 0)
            counts.append((await measure(text, llm, threshold=100_000)).tokens)
        return counts
    finally:
        await llm.aclose()


def answered(paths: list[Path], per_replica: list[int], hits: list[float], tokens: list[int]) -> bool:
    """Whether some split of the documents between the replicas, as many on each as its requests
    say (a document's questions all on one), accounts for each replica's prefix-cache hits: every
    question after a document's first found at least 90 % of that document's tokens there."""
    for first in itertools.combinations(range(len(paths)), per_replica[0] // QUESTIONS):
        on = [[d for d in range(len(paths)) if (d in first) == (r == 0)] for r in (0, 1)]
        if all(hits[r] >= 0.9 * (QUESTIONS - 1) * sum(tokens[d] for d in on[r]) for r in (0, 1)):
            return True
    return False


async def test_glm1m_grid_through_the_router_keeps_each_documents_questions_on_its_reader(
        router_stack: RouterStack, tmp_path: Path) -> None:
    paths = write_documents(tmp_path / "docs", "cli")
    settings = client_settings(router_stack)
    tokens = await tokens_of(paths, settings)
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data"), "GLM1M_API_KEY": router_stack.key,
           "GLM1M_BASE_URL": settings.base_url, "GLM1M_TOKENIZE_URL": settings.tokenize_url,
           "GLM1M_HEALTH_PATH": settings.health_path}
    served, hits = router_stack.counts(SUCCESS), router_stack.counts(HITS)
    out = tmp_path / "grid.xlsx"
    questions = tmp_path / "questions.csv"
    questions.write_text("name,question,type\nparties,Who are the parties?,\n"
                         "term,Which term comes first?,\nclauses,How many clauses are there?,number\n",
                         encoding="utf-8")
    # Two documents at a time, as a grid runs: their questions interleave on the two replicas.
    done = glm1m("grid", str(tmp_path / "docs"), "--questions", str(questions), "-o", str(out),
                 "--concurrency", "2", "--max-tokens", "8", env=env)
    per_replica = [int(n) for n in delta(served, router_stack.counts(SUCCESS))]
    gained = delta(hits, router_stack.counts(HITS))
    print(done.stderr.splitlines()[-1:], per_replica, gained, tokens)
    assert done.returncode in (0, 1), done.stderr  # 1: some cell marked (the demo model answers noise)
    assert f"{DOCUMENTS * QUESTIONS} cells: " in done.stderr, done.stderr
    grid = [list(row) for row in load_workbook(out)["grid"].iter_rows(values_only=True)]
    assert [row[0] for row in grid[1:]] == [path.name for path in paths]
    assert all(cell is not None and str(cell).strip() for row in grid[1:] for cell in row[1:]), grid
    # Every request answered once, a document's questions all on one replica, both replicas used.
    assert sum(per_replica) == DOCUMENTS * QUESTIONS, per_replica
    assert all(n % QUESTIONS == 0 and n > 0 for n in per_replica), per_replica
    assert answered(paths, per_replica, gained, tokens), (per_replica, gained, tokens)


async def test_each_documents_later_questions_are_prefix_hits_on_the_replica_that_read_it(
        router_stack: RouterStack, tmp_path: Path) -> None:
    """The same, cell by cell: the grid's core with the CLI's parameters, one document at a time,
    each replica's counters read as each cell is done."""
    paths = write_documents(tmp_path / "docs", "cells")
    settings = client_settings(router_stack).model_copy(update={"data_dir": tmp_path / "data",
                                                                "max_tokens": 8})
    tokens = await tokens_of(paths, settings)
    cells: list[tuple[list[float], list[float]]] = []  # each cell's requests and hits per replica
    last = [router_stack.counts(SUCCESS), router_stack.counts(HITS)]

    def on_progress(progress: Progress) -> None:
        if progress.done > len(cells):  # a cell is done (the line moves at other times too)
            now = [router_stack.counts(SUCCESS), router_stack.counts(HITS)]
            cells.append((delta(last[0], now[0]), delta(last[1], now[1])))
            last[:] = now

    llm = LlmClient(settings)
    questions = tuple(Question(q, f"q{i}") for i, q in enumerate(
        ("Who are the parties?", "Which term comes first?", "Which notice is last?")))
    asking = Asking(questions, llm, settings, Shelf.of(settings.data_dir, 100), ReadOptions.of(settings),
                    params_of(settings), EN, asyncio.Lock())
    try:
        summary = await run_grid(tuple(paths), asking, tmp_path / "grid.xlsx", 1, on_progress)
    finally:
        await llm.aclose()
    assert all(row.problem is None and not any(c.failed for c in row.cells) for row in summary.rows)
    assert len(cells) == DOCUMENTS * QUESTIONS
    readers = []
    for d in range(DOCUMENTS):
        first, *later = cells[d * QUESTIONS:(d + 1) * QUESTIONS]
        assert sorted(first[0]) == [0.0, 1.0], first  # one replica read it
        reader = first[0].index(1.0)
        for served, hits in later:
            assert served[reader] == 1.0 and served[1 - reader] == 0.0, (d, served)
            # The document's tokens were found in the reader's prefix cache, nowhere else.
            assert hits[reader] > 0.9 * tokens[d] and hits[1 - reader] == 0.0, (d, hits, tokens[d])
        readers.append(reader)
    assert set(readers) == {0, 1}, readers  # the documents spread over both replicas

