"""`glm1m summarize A B C`: three real manuals of this machine asked together through the real demo
server (served context 8,192). The stderr line names the three documents and counts their tokens as
the server does; each file is read once (a second run finds all three on the shelf), and the set
reads whole when it fits and part by part when asked to."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from glm1m.documents.budget import measure
from glm1m.documents.formats import read_document
from glm1m.documents.sets import DocumentSet
from glm1m.llm import LlmClient
from glm1m.settings import Settings
from tests.conftest import ROOT

pytestmark = pytest.mark.server
# Small manuals Debian installs with these packages, three formats, about 3,500 tokens together.
MANUALS = [Path("/usr/share/doc/psmisc/README.md"), Path("/usr/share/doc/util-linux/col.txt"),
           Path("/usr/share/doc/libjson-c5/README.html")]
SET_NAME = "A (README.md), B (col.txt) and C (README.html)"


def glm1m(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "glm1m.cli", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=400, env=env)


@pytest.fixture
def manuals() -> list[Path]:
    missing = [str(path) for path in MANUALS if not path.is_file()]
    assert not missing, f"`make system-tools` installs these manuals' packages; missing: {', '.join(missing)}"
    return MANUALS


async def set_tokens(paths: list[Path], base_url: str) -> int:
    """The set's tokens as the server counts them, read here apart from the command."""
    documents = DocumentSet(tuple(read_document(path) for path in paths))
    llm = LlmClient(Settings(base_url=base_url, retries=0))
    try:
        return (await measure(documents.text(), llm, threshold=100_000)).tokens
    finally:
        await llm.aclose()


def the_set_line(stderr: str) -> str:
    found = re.search(rf"^glm1m: {re.escape(SET_NAME)}: 3 documents, .*$", stderr, re.M)
    assert found is not None, stderr
    return found.group()


async def test_three_files_are_asked_together_and_each_is_read_once(model_server, manuals: list[Path],
                                                                    tmp_path: Path) -> None:
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data"), "GLM1M_MAP_NOTE_TOKENS": "16",
           "GLM1M_MAP_CHUNK_TOKENS": "1200"}
    summarize = ("summarize", *map(str, manuals), "--max-tokens", "16", "--base-url",
                 model_server.base_url, "--question", "Which program does each document describe?")
    tokens = await set_tokens(manuals, model_server.base_url)
    assert 1000 < tokens < 6000  # small enough to read whole in the demo's 8,192-token context

    first = glm1m(*summarize, env=env)
    assert first.returncode == 0, first.stderr
    line = the_set_line(first.stderr)
    assert f", {tokens:,} tokens — " in line and line.endswith("Strategy: whole.")
    assert "on the shelf since" not in first.stderr  # each was read now, once
    assert first.stdout.strip()

    # Read once: the second run finds all three on the shelf, and reads the set part by part.
    second = glm1m(*summarize, "--strategy", "map-reduce", env=env)
    assert second.returncode == 0, second.stderr
    for path in MANUALS:
        assert f"glm1m: {path.name}: on the shelf since" in second.stderr
    line = the_set_line(second.stderr)
    assert f", {tokens:,} tokens — " in line and line.endswith("Strategy: map-reduce.")
    assert re.search(r"reading: (\d+) of \1 parts", second.stderr), second.stderr  # every part read
    assert second.stdout.strip()
