"""The shelf on the page (issue 25): a 500-page PDF attached in one chat, then the same bytes under
another name in a new chat; time from the message to the budget line ("500 pages, 912,345 tokens —
…"), first attach vs second. The first reads the PDF and counts it with the server's /tokenize; the
second finds the user's shelf holding it (by the file's SHA-256) and does neither.

The PDF is made of real text: Debian's valgrind manual (397 pages) and nettle manual, joined with
PyMuPDF to 500 pages, in a temporary folder (never committed). Each round gives the PDF another
title, so its bytes, and its first attach, are new. The answer is not waited for: at the budget
line the page's stop is pressed. Starts its own demo model server (CPU, 8,192-token context) and
app on loopback, stops both by PID, ends by itself (every wait is bounded).

    .venv/bin/python bench/shelf_page.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import os
import platform
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf
from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.demo_stack import demo_stack  # noqa: E402
from tests.support.chainlit_client import ChainlitSession  # noqa: E402

MANUALS = [Path("/usr/share/doc/valgrind/valgrind_manual.pdf.gz"),
           Path("/usr/share/doc/nettle-dev/nettle.pdf.gz")]
PAGES = 500
WAIT_S = 600
BUDGET = re.compile(r"([\d,]+) pages?, ([\d,]+) tokens — ")


@dataclass(frozen=True)
class Attach:
    round: int
    which: str  # "first" or "second"
    name: str
    upload_s: float  # the paperclip's POST /project/file
    budget_s: float  # the message sent → the budget line shown
    shelf_line: bool  # the page said "on the shelf … not read again"
    line: str


def joined_manuals(path: Path, title: str) -> Path:
    """PAGES pages of real manuals in one PDF; `title` in its metadata makes the bytes its own."""
    missing = [str(p) for p in MANUALS if not p.is_file()]
    if missing:
        raise SystemExit(f"these manuals are missing (Debian packages valgrind, nettle-dev): {missing}")
    out = pymupdf.open()
    for manual in MANUALS:
        source = pymupdf.open(stream=gzip.decompress(manual.read_bytes()), filetype="pdf")
        out.insert_pdf(source, to_page=min(source.page_count, PAGES - out.page_count) - 1)
    if out.page_count < PAGES:
        raise SystemExit(f"the manuals hold {out.page_count} pages, not {PAGES}")
    out.set_metadata({"title": title})
    out.save(path, garbage=3, deflate=True)
    return path


async def attach(url: str, path: Path, round_: int, which: str) -> Attach:
    """In a new chat: attach `path`, time the budget line, then press stop and leave."""
    chat = ChainlitSession(url)
    await chat.connect()
    await chat.started(WAIT_S)
    began = time.perf_counter()
    ref = await chat.upload(path, mime="application/pdf")
    uploaded = time.perf_counter() - began
    start = chat.mark()
    sent = time.perf_counter()
    await chat.send("What is this?", file_refs=[ref])
    event = await chat.wait_for(lambda e: e.name in ("new_message", "update_message", "ask")
                                and BUDGET.search(text_of(e)) is not None, WAIT_S, start)
    took = time.perf_counter() - sent
    said = " ".join(text_of(e) for e in chat.events[start:])
    await chat.stop()
    await chat.wait_for(lambda e: e.name == "task_end", WAIT_S, chat.index(event))
    await chat.close()
    return Attach(round_, which, path.name, uploaded, took, "is on the shelf" in said,
                  text_of(event).splitlines()[0])


def text_of(event) -> str:
    data = event.data if isinstance(event.data, dict) else {}
    return str(data.get("output") or (data.get("msg") or {}).get("output") or "")


async def run(url: str, folder: Path, rounds: int) -> list[Attach]:
    results = []
    for n in range(1, rounds + 1):
        pdf = joined_manuals(folder / f"manuals-{n}.pdf", f"glm1m shelf bench, round {n}")
        again = folder / f"renamed-{n}.pdf"
        again.write_bytes(pdf.read_bytes())
        results.append(await attach(url, pdf, n, "first"))
        results.append(await attach(url, again, n, "second"))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="glm1m-shelf-page-"))
    with demo_stack(folder, "shelf-page-key") as url:
        results = asyncio.run(run(url, folder, args.rounds))
    table = Table(title=f"A {PAGES}-page PDF attached on the page, then the same bytes under another name "
                        f"in a new chat (demo server, 8,192-token context, {platform.node()}, "
                        f"{os.cpu_count()} CPUs)")
    for column in ("round", "attach", "file", "upload", "sent → budget line", "shelf said", "budget line"):
        table.add_column(column, justify="right" if column in ("upload", "sent → budget line") else "left")
    for r in results:
        table.add_row(str(r.round), r.which, r.name, f"{r.upload_s:.2f} s", f"{r.budget_s:.2f} s",
                      "yes" if r.shelf_line else "no", r.line)
    Console(width=200).print(table)
    for n in range(1, args.rounds + 1):
        first, second = (r for r in results if r.round == n)
        print(f"round {n}: first {first.budget_s:.2f} s, second {second.budget_s:.2f} s "
              f"({first.budget_s / second.budget_s:.1f}x)")


if __name__ == "__main__":
    main()
