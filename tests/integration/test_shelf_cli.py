"""`glm1m summarize` reads through the shelf, against the real demo server: the second run of the
same scanned PDF does no OCR and sends the server no /tokenize for the document, its question going
as the token ids the first run kept (documents/prompt_ids.py); a copy under another name is not
read or counted again either, only its prompt (which names it) is tokenized; `glm1m shelf list`
shows it and `glm1m shelf rm` removes it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.documents import make_scanned_pdf
from tests.support.fault_proxy import FaultProxy
from tests.support.service import free_port

pytestmark = pytest.mark.server
PAGES = ["Shelf test page one\n安装指南：先运行安装程序，然后重启电脑。",
         "Second page\n配置文件 configuration file"]


def glm1m(*argv: str, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "glm1m.cli", *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=300, env=env)
    return done, time.perf_counter() - began


def proxy_to(model_server) -> Iterator[FaultProxy]:
    proxy = FaultProxy(model_server.root, free_port())
    proxy.start()
    yield proxy
    proxy.close()


@pytest.fixture
def tokenize_counter(model_server):
    """A proxy only /tokenize goes through (GLM1M_TOKENIZE_URL), counting the requests."""
    yield from proxy_to(model_server)


@pytest.fixture
def answers(model_server):
    """A proxy the rest goes through (--base-url), its journal holding every completion asked."""
    yield from proxy_to(model_server)


def test_the_second_summarize_of_a_scan_reads_and_counts_nothing(model_server, tokenize_counter,
                                                                 answers, tmp_path: Path) -> None:
    scan = make_scanned_pdf(tmp_path / "scan.pdf", PAGES)
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data"),
           "GLM1M_TOKENIZE_URL": tokenize_counter.url}
    summarize = ("summarize", "--max-tokens", "8", "--base-url", f"{answers.url}/v1",
                 "--question", "What is on page 2?")
    first, first_s = glm1m(*summarize, str(scan), env=env)
    assert first.returncode == 0, first.stderr
    assert "2 pages" in first.stderr and "not read again" not in first.stderr
    counted_first = tokenize_counter.requests_seen
    assert counted_first >= 4  # the document's count, the question's frame, the prompt's ids, their frame
    assert len(list((tmp_path / "data" / "shelf").rglob("*.ids"))) == 1

    # Tesseract's data gone: OCR would fail, so the second run succeeding read no page again.
    (tmp_path / "no-tessdata").mkdir()
    no_ocr = {**env, "GLM1M_OCR_TESSDATA": str(tmp_path / "no-tessdata")}
    second, second_s = glm1m(*summarize, str(scan), env=no_ocr)
    assert second.returncode == 0, second.stderr
    assert "scan.pdf: on the shelf since" in second.stderr and "2 pages" in second.stderr
    assert tokenize_counter.requests_seen - counted_first == 1  # the question's frame, not the document
    sent = [body for body, _ in answers.journal]
    assert len(sent) == 2 and all(isinstance(body.get("prompt"), list) for body in sent)
    assert sent[1]["prompt"] == sent[0]["prompt"]  # the same question on the same document

    # Another name is in the prompt: only the prompt is tokenized again (no reading, no count).
    copy = tmp_path / "Copy of scan.pdf"
    copy.write_bytes(scan.read_bytes())
    counted_second = tokenize_counter.requests_seen
    third, _ = glm1m(*summarize, str(copy), env=no_ocr)
    assert third.returncode == 0, third.stderr
    assert "Copy of scan.pdf: on the shelf since" in third.stderr and "2 pages" in third.stderr
    assert tokenize_counter.requests_seen - counted_second == 3  # the frame, the prompt's ids, theirs
    print(f"first {first_s:.2f} s, second {second_s:.2f} s")

    listing, _ = glm1m("shelf", "list", env=env)
    assert listing.returncode == 0, listing.stderr
    assert "scan.pdf" in listing.stdout and "2 pages" in listing.stdout
    removed, _ = glm1m("shelf", "rm", "scan.pdf", env=env)
    assert removed.returncode == 0 and "removed scan.pdf" in removed.stderr
    assert list((tmp_path / "data" / "shelf").rglob("*.json")) == []
    empty, _ = glm1m("shelf", "list", env=env)
    assert "the shelf is empty" in empty.stderr
    missing, _ = glm1m("shelf", "rm", "scan.pdf", env=env)
    assert missing.returncode == 2 and "glm1m shelf list" in missing.stderr
