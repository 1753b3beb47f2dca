"""OCR of scanned pages with the real Tesseract (Debian's, chi_sim + eng) through PyMuPDF."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from pathlib import Path

import pytest

from glm1m.documents.formats import ReadOptions, read_document, read_document_async
from glm1m.documents.ocr import OcrMode, OcrOptions, ocr_pages
from glm1m.documents.pdf import extract
from glm1m.errors import DocumentError
from glm1m.progress import Progress, Stage
from tests.support.documents import make_scanned_pdf

FIRST = ("Installation guide\n安装指南：先运行安装程序，然后重启电脑。\n"
         "The quick brown fox jumps over the lazy dog.")
SECOND = "第二页 Second page\n配置文件 configuration file"


def options(mode: OcrMode = OcrMode.AUTO, workers: int = 0) -> ReadOptions:
    return ReadOptions(ocr=OcrOptions(mode, workers=workers))


def children(parent: int | None = None) -> set[int]:
    """PIDs of this process's living worker processes (from /proc: what ps would show), not
    multiprocessing's resource tracker (one per Python process, ending with it)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                command = Path(f"/proc/{entry}/cmdline").read_bytes() if fields[0] != "Z" else b""
            except OSError:  # ended meanwhile
                continue
            if int(fields[1]) == (parent or os.getpid()) and b"spawn_main" in command:
                found.add(int(entry))
    return found


def test_a_scanned_page_is_read_back_in_chinese_and_english(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "scan.pdf", [FIRST])
    seen: list[Progress] = []
    doc = read_document(path, options(), on_progress=seen.append)
    text = " ".join(doc.pages[0].text.split())  # the lines as the scan wrapped them
    assert "安装指南" in text and "安装程序" in text and "重启电脑" in text
    assert "quick brown fox jumps over the lazy dog" in text and "Installation guide" in text
    ocr = [p for p in seen if p.stage is Stage.OCR]
    assert ocr[-1].done == ocr[-1].total == 1 and "pages/s" in ocr[-1].line()


def test_a_mixed_document_keeps_its_text_page_verbatim(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "mixed.pdf", [FIRST, SECOND], text_pages=(1,))
    as_is = extract(path)  # no OCR: the text layer only
    assert as_is.pages[0].text == "" and "配置文件" in as_is.pages[1].text
    read = read_document(path, options())
    assert read.pages[1] == as_is.pages[1] and "安装指南" in read.pages[0].text


def test_always_reads_every_page_and_never_keeps_the_old_sentence(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "mixed.pdf", [FIRST, SECOND], text_pages=(1,))
    again = read_document(path, options(OcrMode.ALWAYS))
    assert "配置文件" in again.pages[1].text and "安装指南" in again.pages[0].text
    scanned = make_scanned_pdf(tmp_path / "scan.pdf", [FIRST])
    with pytest.raises(DocumentError, match="probably scanned"):
        read_document(scanned, options(OcrMode.NEVER))


def test_a_blank_page_costs_no_ocr_and_an_unreadable_scan_gets_a_sentence(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page()
    doc.save(tmp_path / "blank.pdf")
    seen: list[Progress] = []
    with pytest.raises(DocumentError, match="it is blank"):  # nothing shown: no OCR, no OCR advice
        read_document(tmp_path / "blank.pdf", options(), on_progress=seen.append)
    assert not any(p.stage is Stage.OCR for p in seen)
    faint = make_scanned_pdf(tmp_path / "faint.pdf", ["."], dpi=20)
    with pytest.raises(DocumentError, match="not even with OCR"):
        read_document(faint, options())


def test_without_the_language_data_the_sentence_says_how_to_install_it(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "scan.pdf", [FIRST])
    empty = tmp_path / "tessdata"
    empty.mkdir()
    with pytest.raises(DocumentError) as error:
        read_document(path, ReadOptions(ocr=OcrOptions(tessdata=empty)))
    assert "chi_sim, eng" in str(error.value) and "apt-get install tesseract-ocr" in str(error.value)


def test_stop_during_ocr_ends_every_worker(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "long.pdf", [FIRST] * 12)
    stop = threading.Event()
    workers: set[int] = set()

    def on_progress(progress: Progress) -> None:
        if progress.done == 0:
            # Started just before, but perhaps not yet exec'd (a spawned child shows the parent's
            # command line until then): multiprocessing knows their PIDs from start() on.
            workers.update(p.pid for p in multiprocessing.active_children() if p.pid)
        else:
            stop.set()  # stop once the first page is read

    texts = ocr_pages(path, "pdf", range(12), OcrOptions(workers=2), "long.pdf", on_progress, stop)
    assert 1 <= len(texts) < 12 and len(workers) == 2
    assert not workers & children()  # none left running
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists()


async def test_cancelling_the_read_stops_the_ocr_processes(tmp_path: Path) -> None:
    path = make_scanned_pdf(tmp_path / "long.pdf", [FIRST] * 12)
    loop = asyncio.get_running_loop()
    first_page = asyncio.Event()
    workers: set[int] = set()

    def on_progress(progress: Progress) -> None:
        if progress.stage is Stage.OCR and progress.done == 0:
            workers.update(p.pid for p in multiprocessing.active_children() if p.pid)
        if progress.stage is Stage.OCR and progress.done >= 1:
            loop.call_soon_threadsafe(first_page.set)

    task = asyncio.create_task(read_document_async(path, options(workers=2), on_progress=on_progress))
    await first_page.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(workers) == 2 and not workers & children()
