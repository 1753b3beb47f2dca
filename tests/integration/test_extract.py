"""`glm1m extract` as a person runs it: the text with its markers on stdout, progress on stderr,
one sentence and exit 2 for a file it cannot read, Ctrl-C ending the OCR processes."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

from tests.integration.test_ocr import FIRST, children
from tests.support.documents import make_docx, make_scanned_pdf
from tests.support.pdfs import make_pdf

TRACE_MARKS = ("Traceback", 'File "', "Error:")


def extract(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "glm1m.cli", "extract", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


PROGRESS = re.compile(r"glm1m: [a-z ()]+: [\d,]+ of [\d,]+ pages")


def one_sentence(stderr: str) -> str:
    """The one line saying why, after any progress lines."""
    lines = [line for line in stderr.splitlines() if line.strip() and not PROGRESS.match(line)]
    assert len(lines) == 1 and lines[0].startswith("glm1m: ") and lines[0].endswith(".")
    assert stderr.rstrip().endswith(lines[0])
    assert not any(mark in stderr for mark in TRACE_MARKS)
    return lines[0]


def test_a_pdf_prints_its_pages_with_their_markers(tmp_path: Path) -> None:
    make_pdf(tmp_path / "two.pdf", ["first page text", "second page text"])
    run = extract(tmp_path / "two.pdf")
    assert run.returncode == 0
    assert run.stdout == "[p. 1]\nfirst page text\n\n[p. 2]\nsecond page text\n"
    assert "reading: 2 of 2 pages" in run.stderr


def test_a_docx_prints_its_sections_and_where_they_are(tmp_path: Path) -> None:
    make_docx(tmp_path / "guide.docx", [(1, "Installation"), (0, "Run it."), (1, "配置"), (0, "编辑。")])
    run = extract(tmp_path / "guide.docx")
    assert run.returncode == 0
    assert run.stdout == "[§ 1]\nInstallation\n\nRun it.\n\n[§ 2]\n配置\n\n编辑。\n"
    shown = extract(tmp_path / "guide.docx", "--locations")
    assert shown.stdout.startswith("[§ 1] Installation · ¶ 1\nInstallation\n\nRun it.\n\n[§ 2] 配置 · ¶ 1\n")


def test_a_scanned_pdf_is_read_with_ocr_and_progress_goes_to_stderr(tmp_path: Path) -> None:
    make_scanned_pdf(tmp_path / "scan.pdf", [FIRST, FIRST])
    run = extract(tmp_path / "scan.pdf")
    assert run.returncode == 0 and run.stdout.startswith("[p. 1]\n") and "[p. 2]\n" in run.stdout
    assert run.stdout.count("安装指南") == 2 and "pages/s" in run.stderr
    assert "reading scanned pages (OCR): 2 of 2 pages" in run.stderr
    never = extract(tmp_path / "scan.pdf", "--ocr", "never")
    assert never.returncode == 2 and "probably scanned" in one_sentence(never.stderr) and not never.stdout


def test_a_file_it_cannot_read_exits_2_with_one_sentence(tmp_path: Path) -> None:
    (tmp_path / "fake.pdf").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    (tmp_path / "fake.docx").write_bytes(b"PK\x03\x04 nothing")
    (tmp_path / "slides.pptx").write_bytes(b"PK")
    for path, says in [("fake.pdf", "is not a PDF"), ("fake.docx", "cannot be opened as DOCX"),
                       ("slides.pptx", "is not a document glm1m reads"), ("missing.md", "is not a file")]:
        run = extract(tmp_path / path)
        assert run.returncode == 2 and says in one_sentence(run.stderr) and run.stdout == ""


def test_ctrl_c_during_ocr_exits_130_and_leaves_no_worker(tmp_path: Path) -> None:
    make_scanned_pdf(tmp_path / "long.pdf", [FIRST] * 12)
    proc = subprocess.Popen([sys.executable, "-m", "glm1m.cli", "extract", str(tmp_path / "long.pdf")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:  # waits for the OCR stage's first line: the workers are up
            if "reading scanned pages (OCR): 0 of 12" in line:
                break
        workers = children(proc.pid)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 130
        assert "stopped." in proc.stderr.read()
        assert workers and not any(Path(f"/proc/{pid}").exists() for pid in workers)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
