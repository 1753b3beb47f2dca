"""Real files through glm1m's document reader: what a user would get from each, counted.

Needs nothing running (no model server: only reading, as `glm1m extract` does). Give it folders of
real files (public test corpora you fetched, the manuals Debian's -doc packages install); every file
whose suffix glm1m reads goes through `read_document` with OCR off, each in the reader's own
process, with a time limit. Prints one table and, with --out, one JSON line per file.

    .venv/bin/python -m bench.real_files /usr/share/doc /tmp/corpora --out /tmp/real.jsonl

Columns: read (text came back), refused (one sentence, a UserFacingError), traceback (any other
exception: a bug), garbled (text came back but garble.py would not trust a page of it), seconds.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

LIMIT_S = 120.0


def read_one(path: str, queue: multiprocessing.Queue) -> None:
    from glm1m.documents.formats import ReadOptions, read_document
    from glm1m.documents.garble import is_garbled
    from glm1m.documents.ocr import OcrMode, OcrOptions
    from glm1m.errors import UserFacingError

    try:
        text = read_document(Path(path), ReadOptions(ocr=OcrOptions(OcrMode.NEVER)))
        garbled = sum(is_garbled(page.text) for page in text.pages)
        queue.put({"outcome": "garbled" if garbled else "read", "pages": len(text.pages),
                   "characters": sum(len(page.text) for page in text.pages)})
    except UserFacingError as error:
        queue.put({"outcome": "refused", "sentence": str(error), "key": error.key})
    except Exception as error:  # noqa: BLE001 - a traceback is what this counts
        queue.put({"outcome": "traceback", "error": f"{type(error).__name__}: {error}"[:300]})


def run(path: Path) -> dict:
    queue: multiprocessing.Queue = multiprocessing.get_context("spawn").Queue()
    process = multiprocessing.get_context("spawn").Process(target=read_one, args=(str(path), queue))
    began = time.monotonic()
    process.start()
    process.join(LIMIT_S)
    if process.is_alive():
        process.kill()
        process.join()
        found = {"outcome": "hang"}
    else:
        found = queue.get() if not queue.empty() else {"outcome": "traceback", "error": "no result"}
    return {"file": str(path), "suffix": path.suffix.lower(), "seconds": round(time.monotonic() - began, 2),
            **found}


def main() -> None:
    from glm1m.documents.formats import BY_SUFFIX

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    files = sorted(p for folder in args.folders for p in folder.rglob("*")
                   if p.is_file() and p.suffix.lower() in BY_SUFFIX)
    results = []
    for path in files:
        results.append(run(path))
        if args.out:
            with args.out.open("a", encoding="utf-8") as out:
                out.write(json.dumps(results[-1], ensure_ascii=False) + "\n")
    by_suffix: dict[str, Counter] = {}
    for result in results:
        by_suffix.setdefault(result["suffix"], Counter())[result["outcome"]] += 1
    table = Table(title=f"{len(results)} real files through read_document (OCR off)")
    for column in ("suffix", "files", "read", "refused", "garbled", "traceback", "hang"):
        table.add_column(column, justify="right")
    outcomes = ("read", "refused", "garbled", "traceback", "hang")
    for suffix, counts in sorted(by_suffix.items()):
        table.add_row(suffix, str(sum(counts.values())), *(str(counts[k]) for k in outcomes))
    Console().print(table)
    for result in results:
        if result["outcome"] in ("traceback", "hang", "garbled"):
            print(result["outcome"], result["file"], result.get("error", ""))


if __name__ == "__main__":
    main()
