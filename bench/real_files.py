r"""Real files through glm1m's document reader: what a user would get from each, counted.

Needs nothing running (no model server: only reading, as `glm1m extract` does). Give it folders of
real files (public test corpora you fetched, the manuals Debian's -doc packages install); every file
whose suffix glm1m reads goes through `read_document` with OCR off, each in the reader's own
process, with a time limit. Prints one table and, with --out, one JSON line per file.

    .venv/bin/python -m bench.real_files /usr/share/doc /tmp/corpora --out /tmp/real.jsonl

Columns: read (text came back), refused (one sentence, a UserFacingError), traceback (any other
exception: a bug), garbled (text came back but garble.py would not trust a page of it), hang (past
the limit), lost > 1 % (files read that left out more than 1 % of their words) and worst lost.
Lost text is the share of the source's distinct words (`\w+`, casefolded, 2 characters or more)
found nowhere in what glm1m read; the source's words come from an independent reading of the file
(reference_text), so a word the reference keeps and a reader rightly drops (a PDF's hidden text, an
HTML title) counts as lost too: the examples in the JSON line tell which.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from rich.console import Console
from rich.table import Table

LIMIT_S = 120.0
WORD = re.compile(r"\w+")
PDF_PAGES = 2000  # the reference reads no more of a PDF than this (glm1m's own cap is 5,000)
# Where a browser starts a new line: words on either side are not one word (inline tags join them).
BLOCK = {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
         "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p",
         "pre", "section", "table", "td", "th", "title", "tr", "ul"}


def words(text: str) -> list[str]:
    """The words lost text counts, in order, repeats kept."""
    return [w for w in (m.casefold() for m in WORD.findall(text)) if len(w) >= 2]


class VisibleText(HTMLParser):
    """An HTML page's text outside <script> and <style> (entities decoded by HTMLParser)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in ("script", "style")
        self.parts.append("\n" if tag in BLOCK else "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.hidden = max(self.hidden - 1, 0)  # a stray </script> hides nothing after it
        self.parts.append("\n" if tag in BLOCK else "")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def reference_text(path: Path) -> str | None:
    """The file's text read without glm1m, by its suffix; None for a suffix not measured."""
    suffix = path.suffix.lower()
    if suffix in (".txt", ".md", ".markdown", ".rst", ".html", ".htm", ".xhtml"):
        from charset_normalizer import from_bytes

        best = from_bytes(path.read_bytes()).best()
        if best is None:
            return None
        if suffix in (".txt", ".md", ".markdown", ".rst"):
            return str(best)
        parser = VisibleText()
        parser.feed(str(best))
        parser.close()
        return "".join(parser.parts)
    if suffix == ".docx":
        import zipfile
        from xml.etree import ElementTree

        # ElementTree unescapes the entities; runs are joined as Word shows them (a word may be
        # split across two w:t), while paragraphs, tabs and breaks separate words.
        with zipfile.ZipFile(path) as archive:
            root = ElementTree.fromstring(archive.read("word/document.xml"))
        parts = []
        for element in root.iter():
            space, _, local = element.tag.rpartition("}")
            if "wordprocessingml" not in space:
                continue
            if local == "t":
                parts.append(element.text or "")
            elif local in ("p", "tab", "br", "cr", "tc"):
                parts.append("\n")
        return "".join(parts)
    if suffix == ".pdf":
        import pymupdf

        with pymupdf.open(path) as document:
            return "\n".join(document[i].get_text() for i in range(min(len(document), PDF_PAGES)))
    return None


def lost_text(path: Path, read: str) -> dict:
    """Lost text of a file read: the share of the reference's distinct words missing in `read`."""
    try:
        reference = reference_text(path)
    except Exception:  # noqa: BLE001 - a failed measurement is no failed read
        return {"lost": None}
    if reference is None:
        return {"lost": None}
    source = dict.fromkeys(words(reference))  # distinct, in the order they first appear
    if not source:
        return {"lost": None}  # no word to lose: a share of nothing
    found = set(words(read))
    missing = [w for w in source if w not in found]
    return {"lost": round(len(missing) / len(source), 4), "lost_examples": missing[:8],
            "source_words": len(source)}


def read_one(path: str, queue: multiprocessing.Queue) -> None:
    from glm1m.documents.formats import ReadOptions, read_document
    from glm1m.documents.garble import is_garbled
    from glm1m.documents.ocr import OcrMode, OcrOptions
    from glm1m.errors import UserFacingError

    try:
        text = read_document(Path(path), ReadOptions(ocr=OcrOptions(OcrMode.NEVER)))
        garbled = sum(is_garbled(page.text) for page in text.pages)
        read = "\n".join(page.text for page in text.pages)
        queue.put({"outcome": "garbled" if garbled else "read", "pages": len(text.pages),
                   "characters": sum(len(page.text) for page in text.pages),
                   **lost_text(Path(path), read)})
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
    worst: dict[str, float] = {}
    for result in results:
        counts = by_suffix.setdefault(result["suffix"], Counter())
        counts[result["outcome"]] += 1
        if result.get("lost") is not None:
            counts["lost > 1 %"] += result["lost"] > 0.01
            worst[result["suffix"]] = max(worst.get(result["suffix"], 0.0), result["lost"])
    table = Table(title=f"{len(results)} real files through read_document (OCR off)")
    outcomes = ("read", "refused", "garbled", "traceback", "hang", "lost > 1 %")
    for column in ("suffix", "files", *outcomes, "worst lost"):
        table.add_column(column, justify="right")
    for suffix, counts in sorted(by_suffix.items()):
        shown = f"{worst[suffix]:.1%}" if suffix in worst else "-"  # "-": none measured
        table.add_row(suffix, str(sum(counts[k] for k in outcomes[:5])),
                      *(str(counts[k]) for k in outcomes), shown)
    Console().print(table)
    for result in results:
        if result["outcome"] in ("traceback", "hang", "garbled"):
            print(result["outcome"], result["file"], result.get("error", ""))
    for result in sorted(results, key=lambda r: -(r.get("lost") or 0)):
        if (result.get("lost") or 0) > 0.01:
            print(f"lost {result['lost']:.1%} of {result['source_words']}", result["file"],
                  " ".join(result["lost_examples"]))


if __name__ == "__main__":
    main()
