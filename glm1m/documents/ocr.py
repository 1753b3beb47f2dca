"""OCR of scanned pages with Tesseract, through PyMuPDF (`get_textpage_ocr`), on every core.

About 10 s a page on one core (Tesseract 5.3, chi_sim+eng, 150 dpi; issue 16), so pages are read
in parallel: worker processes, not threads, because a MuPDF document is not thread-safe and
Tesseract holds the GIL-free part only. Each worker opens the file itself and takes the next page
from a shared queue; results come back page by page. Stopping (`stop` set, Ctrl-C, an error)
terminates every worker before returning: nothing is left running.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import re
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from threading import Event

from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress, ignore
from glm1m.settings import Settings

# Tesseract's chi_sim puts a space between CJK characters now and then: none between two CJK
# characters, read as a text layer does.
CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
CJK_GAP = re.compile(f"(?<=[{CJK}]) +(?=[{CJK}])")
POLL_S = 0.2  # how often the wait for a page looks at `stop` and at the workers' health
INSTALL = ("Install Tesseract with its language data (Debian/Ubuntu: `sudo apt-get install "
           "tesseract-ocr tesseract-ocr-eng tesseract-ocr-chi-sim tesseract-ocr-chi-tra`, or `make "
           "system-tools`), or set GLM1M_OCR_TESSDATA to the folder holding the .traineddata files.")
PR_SET_PDEATHSIG = 1  # Linux prctl: a signal for this process when its parent dies


class OcrMode(str, Enum):
    AUTO = "auto"  # only pages without a text layer
    ALWAYS = "always"  # every page, its text layer replaced
    NEVER = "never"  # no OCR: a document without text gets the "probably scanned" sentence


@dataclass(frozen=True)
class OcrOptions:
    mode: OcrMode = OcrMode.AUTO
    languages: str = "chi_sim+eng"  # Tesseract's names, joined by "+"
    dpi: int = 150
    workers: int = 0  # 0: one per core this process may use
    tessdata: Path | None = None  # None: what PyMuPDF finds (TESSDATA_PREFIX, else `tesseract`)

    @classmethod
    def of(cls, settings: Settings, mode: OcrMode | str | None = None) -> OcrOptions:
        return cls(OcrMode(mode or settings.ocr), settings.ocr_languages, settings.ocr_dpi,
                   settings.ocr_workers, settings.ocr_tessdata)

    def worker_count(self, pages: int) -> int:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        return max(1, min(self.workers or cores or 1, pages))


@dataclass(frozen=True)
class Job:
    """What a worker needs: picklable, so it crosses to a spawned process."""
    path: str
    filetype: str
    languages: str
    dpi: int
    tessdata: str


def tessdata_dir(options: OcrOptions) -> Path:
    """The folder with Tesseract's language data, every language asked for in it; raises
    DocumentError saying how to install what is missing."""
    import pymupdf

    if options.tessdata is not None:
        folder = options.tessdata
    else:
        try:
            folder = Path(pymupdf.get_tessdata())
        except RuntimeError as error:
            raise DocumentError(f"Reading scanned pages needs Tesseract OCR, which is not "
                                f"installed. {INSTALL}") from error
    missing = [lang for lang in options.languages.split("+")
               if not (folder / f"{lang}.traineddata").is_file()]
    if missing:
        raise DocumentError(f"Reading scanned pages needs Tesseract's language data for "
                            f"{', '.join(missing)}, which is not in {folder}. {INSTALL}")
    return folder


def ocr_pages(path: Path, filetype: str, indices: Sequence[int], options: OcrOptions, name: str,
              on_progress: OnProgress = ignore, stop: Event | None = None) -> dict[int, str]:
    """The OCR text of each page in `indices` (0-based), by index. on_progress runs in this thread
    after each page. Raises DocumentError when Tesseract is missing or a page cannot be read; a
    KeyboardInterrupt goes on up once the workers are gone. When `stop` is set, returns what was
    read so far (the caller checks `stop`)."""
    if not indices:
        return {}
    job = Job(str(path), filetype, options.languages, options.dpi, str(tessdata_dir(options)))
    context = multiprocessing.get_context("spawn")  # no fork of a threaded process (the app)
    tasks: multiprocessing.Queue = context.Queue()
    results: multiprocessing.Queue = context.Queue()
    for index in indices:
        tasks.put(index)
    count = options.worker_count(len(indices))
    for _ in range(count):
        tasks.put(None)  # one "no more pages" for each worker
    progress = Progress("reading scanned pages (OCR)", 0, len(indices), unit="pages",
                        started=time.monotonic())
    workers = [context.Process(target=work, args=(job, tasks, results), daemon=True,
                               name=f"glm1m-ocr-{n}") for n in range(count)]
    texts: dict[int, str] = {}
    try:
        for worker in workers:
            worker.start()
        on_progress(progress)
        while len(texts) < len(indices):
            if stop is not None and stop.is_set():
                break
            try:
                index, text, error = results.get(timeout=POLL_S)
            except queue.Empty:
                dead = [w.exitcode for w in workers if w.exitcode not in (None, 0)]
                if dead:
                    why = ("it was killed, most likely for want of memory" if dead[0] == -signal.SIGKILL
                           else f"exit code {dead[0]}; the app's log says why")
                    raise DocumentError(
                        f"Reading the scanned pages of {name} stopped: an OCR process ended "
                        f"({why}). Try again, or set GLM1M_OCR_WORKERS lower.") from None
                continue
            if error:
                raise DocumentError(f"Page {index + 1} of {name} could not be read with OCR "
                                    f"({error}). Check that the page opens in a PDF viewer; "
                                    f"upload it again, or with --ocr never.")
            texts[index] = text
            progress = Progress(progress.stage, len(texts), len(indices), unit="pages",
                                started=progress.started)
            on_progress(progress)
    finally:
        end(workers, tasks, results)
    return texts


def end(workers: list, tasks: multiprocessing.Queue, results: multiprocessing.Queue) -> None:
    """Every worker gone: finished ones joined, the others terminated (then killed)."""
    for worker in workers:
        if worker.is_alive() and worker.pid is not None:
            worker.terminate()
    for worker in workers:
        if worker.pid is None:
            continue  # never started
        worker.join(5)
        if worker.is_alive():
            worker.kill()
            worker.join()
    for q in (tasks, results):
        q.cancel_join_thread()  # a terminated worker may leave items: do not wait to flush them
        q.close()


def work(job: Job, tasks: multiprocessing.Queue, results: multiprocessing.Queue) -> None:
    """A worker: pages from `tasks` until None, each one's text (or error) to `results`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent, which ends us
    try:  # ended with the parent, even when the parent is killed outright
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    import pymupdf

    with pymupdf.open(job.path, filetype=job.filetype) as doc:
        while (index := tasks.get()) is not None:
            try:
                page = doc.load_page(index)
                textpage = page.get_textpage_ocr(language=job.languages, dpi=job.dpi, full=True,
                                                 tessdata=job.tessdata)
                results.put((index, lines_of(page.get_text("words", textpage=textpage)), ""))
            except (RuntimeError, ValueError) as error:
                results.put((index, "", str(error) or type(error).__name__))


def lines_of(words: list[tuple]) -> str:
    """Text from OCR'd words (x0, y0, x1, y1, word, ...). MuPDF hands Tesseract's words over as
    lines of one word each, so lines are rebuilt: words whose middles lie within half a word's
    height of each other form a line, left to right; a gap of more than a line's height between
    lines is a paragraph break. (Reading a page with sort=True instead interleaved the lines of a
    scanned Chinese man page where tabs left wide gaps.)"""
    from glm1m.documents.pdf import normalise

    placed = sorted(((w[1] + w[3]) / 2, w[3] - w[1], w[0], str(w[4])) for w in words if str(w[4]).strip())
    lines: list[tuple[float, float, list[tuple[float, str]]]] = []  # middle, height, (x, word)
    for middle, height, x, word in placed:
        if lines and abs(middle - lines[-1][0]) <= max(height, lines[-1][1]) / 2:
            lines[-1][2].append((x, word))
        else:
            lines.append((middle, height, [(x, word)]))
    out: list[str] = []
    for number, (middle, height, found) in enumerate(lines):
        if number and middle - lines[number - 1][0] > 2.2 * max(height, lines[number - 1][1]):
            out.append("")
        out.append(" ".join(word for _, word in sorted(found)))
    return normalise(CJK_GAP.sub("", "\n".join(out)))
