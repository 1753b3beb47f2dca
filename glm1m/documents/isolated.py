"""A reader run in a process of its own, so that stopping it stops it.

MuPDF's layout of a reflowing document cannot be interrupted from Python, and some inputs make it
slow beyond use: a DOCX paragraph of one 100,000-character word took 8 s to lay out, 30,000 took
0.47 s (MuPDF 1.28.5, growing faster than the square). In a thread such a file would burn a core
until done whatever the user pressed; in a process, stop (or Ctrl-C, or the parent dying) ends it.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import queue
import signal
from collections.abc import Callable
from threading import Event
from typing import Any

from glm1m.documents.pages import DocumentText
from glm1m.errors import DocumentError
from glm1m.progress import OnProgress, Progress, ignore

POLL_S = 0.2
PR_SET_PDEATHSIG = 1

Reader = Callable[..., DocumentText]  # called as reader(*args, on_progress=...)


def read_isolated(reader: Reader, args: tuple[Any, ...], name: str, on_progress: OnProgress = ignore,
                  stop: Event | None = None) -> DocumentText:
    """reader(*args, on_progress=...) in a spawned process; its progress comes back to
    on_progress (in this thread), its DocumentError as the same error (its id and fields). Raises
    DocumentError when `stop` is set; the process is gone whenever this returns or raises."""
    context = multiprocessing.get_context("spawn")  # no fork of a threaded process (the app)
    results: multiprocessing.Queue = context.Queue()
    child = context.Process(target=run, args=(reader, args, results), daemon=True,
                            name="glm1m-reader")
    child.start()
    try:
        while True:
            if stop is not None and stop.is_set():
                raise DocumentError(key="doc_read_stopped", name=name)
            try:
                kind, value = results.get(timeout=POLL_S)
            except queue.Empty:
                if child.exitcode is not None:
                    raise DocumentError(key="doc_reader_ended", name=name,
                                        code=child.exitcode) from None
                continue
            if kind == "progress":
                on_progress(value)
            elif kind == "error":
                raise value
            else:
                return value
    finally:
        if child.is_alive():
            child.terminate()
        child.join(5)
        if child.is_alive():
            child.kill()
            child.join()
        results.cancel_join_thread()
        results.close()


def run(reader: Reader, args: tuple[Any, ...], results: multiprocessing.Queue) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent, which ends us
    try:  # ended with the parent, even when the parent is killed outright
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass

    def report(progress: Progress) -> None:
        results.put(("progress", progress))

    try:
        results.put(("done", reader(*args, on_progress=report)))
    except DocumentError as error:
        results.put(("error", error))  # pickled with its id and fields (its __dict__)
