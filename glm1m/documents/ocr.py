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
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from threading import Event

from glm1m.catalog import Said, said
from glm1m.documents.limits import check_ocr_pages
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress, Stage, ignore
from glm1m.settings import Settings

# Tesseract's chi_sim puts a space between CJK characters now and then: none between two CJK
# characters, read as a text layer does.
CJK = "\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef"
CJK_GAP = re.compile(f"(?<=[{CJK}]) +(?=[{CJK}])")
CJK_CHAR = re.compile(f"[{CJK}]")
REPEATED = re.compile(r"(.)\1{2,}")  # "一一一", "~~~": hatching, rules, borders
# A picture (an engraving, a photo) read by Tesseract gives lines of strokes and marks ("一=~ 四ome
# OS 、 _ & -一 —_— -一 1"): a page most of whose lines are such is a picture, and its "text" is
# dropped. Measured: a hatched drawing read with chi_sim+eng gave 43 lines, 31 (72%) of them
# marks by the rule below; scanned pages of Chinese and English text gave none.
PICTURE_SHARE = 0.6
NUMBER = re.compile(r"[(+-]?\d[\d.,:/%)]*")
POLL_S = 0.2  # how often the wait for a page looks at `stop` and at the workers' health
INSTALL = Said("ocr_install")  # how to get Tesseract, the end of its sentences
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
    max_pages: int = 1000  # a document with more pages to OCR is refused before any is read

    @classmethod
    def of(cls, settings: Settings, mode: OcrMode | str | None = None) -> OcrOptions:
        return cls(OcrMode(mode or settings.ocr), settings.ocr_languages, settings.ocr_dpi,
                   settings.ocr_workers, settings.ocr_tessdata, settings.ocr_max_pages)

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
    logs: str  # a folder: each worker's stderr goes to a file in it (see quiet())


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
            raise DocumentError(key="ocr_missing", install=INSTALL) from error
    missing = [lang for lang in options.languages.split("+")
               if not (folder / f"{lang}.traineddata").is_file()]
    if missing:
        raise DocumentError(key="ocr_languages_missing", languages=missing, folder=folder,
                            install=INSTALL)
    return folder


def ocr_pages(path: Path, filetype: str, indices: Sequence[int], options: OcrOptions, name: str,
              on_progress: OnProgress = ignore, stop: Event | None = None) -> dict[int, str]:
    """The OCR text of each page in `indices` (0-based), by index. on_progress runs in this thread
    after each page. Raises DocumentError when Tesseract is missing or a page cannot be read, and
    LimitReached, before any page is read, for more pages than options.max_pages; a
    KeyboardInterrupt goes on up once the workers are gone. When `stop` is set, returns what was
    read so far (the caller checks `stop`)."""
    if not indices:
        return {}
    # Refused whole, not cut to its first pages: an answer about a book read in part would be
    # an answer about its beginning, after minutes of OCR (limits.py).
    check_ocr_pages(len(indices), name, options.max_pages)
    with tempfile.TemporaryDirectory(prefix="glm1m-ocr-") as logs:
        job = Job(str(path), filetype, options.languages, options.dpi, str(tessdata_dir(options)),
                  logs)
        return read_pages(job, indices, options, name, on_progress, stop)


def read_pages(job: Job, indices: Sequence[int], options: OcrOptions, name: str,
               on_progress: OnProgress, stop: Event | None) -> dict[int, str]:
    context = multiprocessing.get_context("spawn")  # no fork of a threaded process (the app)
    tasks: multiprocessing.Queue = context.Queue()
    results: multiprocessing.Queue = context.Queue()
    for index in indices:
        tasks.put(index)
    count = options.worker_count(len(indices))
    for _ in range(count):
        tasks.put(None)  # one "no more pages" for each worker
    progress = Progress(Stage.OCR, 0, len(indices), unit="pages",
                        started=time.monotonic())
    workers = [context.Process(target=work, args=(job, n, tasks, results), daemon=True,
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
                index, text, error, tesseract = results.get(timeout=POLL_S)
            except queue.Empty:
                dead = [(n, w.exitcode) for n, w in enumerate(workers) if w.exitcode not in (None, 0)]
                if dead:
                    line = last_line(log_of(job, dead[0][0]))
                    why = (said("ocr_killed") if dead[0][1] == -signal.SIGKILL else
                           said("ocr_exit_code", code=dead[0][1],
                                tail=said("ocr_exit_said", line=line) if line else ""))
                    raise DocumentError(key="ocr_process_ended", name=name, why=why) from None
                continue
            if tesseract:
                raise DocumentError(key="ocr_cannot_start", name=name, languages=job.languages,
                                    folder=job.tessdata, error=error, install=INSTALL)
            if error:
                raise DocumentError(key="ocr_page_failed", page=index + 1, name=name, error=error)
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


def log_of(job: Job, number: int) -> Path:
    return Path(job.logs) / f"worker-{number}.log"


def last_line(path: Path, start: int = 0, first: bool = False) -> str:
    """The last (or first) line written to a worker's log from `start` on; "" when none."""
    try:
        with path.open("rb") as f:
            f.seek(start)
            lines = [line.strip() for line in f.read().decode(errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [line for line in lines if line]
    return (lines[0] if first else lines[-1]) if lines else ""


def quiet(log: Path) -> None:
    """This process's stderr (file descriptor 2) into `log`: Tesseract writes its warnings and
    complaints there itself (a damaged eng.traineddata: "Error opening data file ...", "Tesseract
    couldn't load any languages!" and a traceback), and they reached the terminal and the app's
    log between glm1m's own lines. Read back for a sentence when a page or the worker fails."""
    os.dup2(os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), 2)


def work(job: Job, number: int, tasks: multiprocessing.Queue, results: multiprocessing.Queue
         ) -> None:
    """A worker: pages from `tasks` until None, each one's text (or error) to `results`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent, which ends us
    try:  # ended with the parent, even when the parent is killed outright
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    log = log_of(job, number)
    quiet(log)
    import pymupdf

    from glm1m.documents.mupdf import MUPDF_ERRORS

    # FzErrorLibrary: Tesseract itself failed ("language initialisation failed"), not the page.
    library = getattr(getattr(pymupdf, "mupdf", None), "FzErrorLibrary", ())
    with pymupdf.open(job.path, filetype=job.filetype) as doc:
        while (index := tasks.get()) is not None:
            start = log.stat().st_size
            try:
                page = doc.load_page(index)
                textpage = page.get_textpage_ocr(language=job.languages, dpi=job.dpi, full=True,
                                                 tessdata=job.tessdata)
                text = picture_dropped(lines_of(page.get_text("words", textpage=textpage)))
                results.put((index, text, "", False))
            except MUPDF_ERRORS as error:
                said = last_line(log, start, first=True)  # Tesseract's own words come first
                tesseract = isinstance(error, library)
                results.put((index, "", (said if tesseract and said else str(error))
                             or type(error).__name__, tesseract))


def wordlike(line: str) -> bool:
    """Whether an OCR'd line reads as text: at least half its characters (a run of one repeated
    character and table rules not counted) are letters, digits or CJK, and a word is among them
    (3 letters, or 2 different CJK characters, or a number)."""
    marks = [c for c in REPEATED.sub("", line) if not c.isspace() and c not in "|│"]  # table rules
    if not marks or sum(c.isalnum() for c in marks) < len(marks) / 2:
        return False
    return any(sum(c.isalnum() and not CJK_CHAR.match(c) for c in token) >= 3
               or len(set(CJK_CHAR.findall(token))) >= 2 or NUMBER.fullmatch(token) is not None
               for token in line.split())


def picture_dropped(text: str) -> str:
    """The OCR'd text, or "" when most of its lines are marks, not words (a picture)."""
    lines = [line for line in text.splitlines() if line.strip()]
    marks = sum(not wordlike(line) for line in lines)
    return "" if lines and marks > PICTURE_SHARE * len(lines) else text


def lines_of(words: list[tuple]) -> str:
    """Text from OCR'd words (x0, y0, x1, y1, word, ...). MuPDF hands Tesseract's words over as
    lines of one word each, so lines are rebuilt: words whose middles lie within half a word's
    height of each other form a line, left to right; a gap of more than a line's height between
    lines is a paragraph break. (Reading a page with sort=True instead interleaved the lines of a
    scanned Chinese man page where tabs left wide gaps.)"""
    from glm1m.documents.mupdf import normalise

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
