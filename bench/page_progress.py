"""How the page's translation status moves: when the job's first count arrives, how often it
updates, and by how many rows at a time. Through the real app (issue 17: "0 translated for about
30 s, then steps of 64").

One session attaches a two-column CSV without words (as a user drops a file), chooses the column,
and records every status update of the job with its arrival time until the job's record ("Finished:
...") comes. Starts its own demo model server and app on loopback, stops both by PID, ends by
itself (every wait is bounded).

    .venv/bin/python -m bench.page_progress [--rows 300]
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import platform
import re
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.demo_stack import demo_stack
from tests.support.chainlit_client import ChainlitSession

WAIT_S = 900
COUNT = re.compile(r"translating: ([\d,]+) of ([\d,]+) rows")


def write_csv(path: Path, rows: int) -> None:
    with path.open("w", newline="", encoding="gbk") as f:  # as Chinese Excel saves it
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows([i, f"第{i}条：本合同自双方签字之日起生效。"] for i in range(rows))


async def run(url: str, source: Path) -> tuple[float, list[tuple[float, int]], float]:
    """(seconds from sending to the job's first line, [(seconds, rows done)] per update, total)."""
    chat = ChainlitSession(url)
    await chat.connect()
    await chat.started(WAIT_S)
    chat.choose_action = lambda actions: next(a for a in actions if a["payload"].get("column") == "text")
    ref = await chat.upload(source)
    start = chat.mark()
    sent = time.monotonic()
    await chat.send("", file_refs=[ref])
    head: float | None = None
    counts: list[tuple[float, int]] = []
    seen = start
    while True:
        event = await chat.wait_for(lambda e: e.name in ("new_message", "update_message"), WAIT_S, seen)
        seen = chat.index(event) + 1
        text = str(event.data.get("output") or "")
        now = time.monotonic() - sent
        if head is None and "Keep this tab open" in text:
            head = now
        if "Finished:" in text:
            break
        if found := COUNT.search(text):
            counts.append((now, int(found.group(1).replace(",", ""))))
    await chat.close()
    return head or 0.0, counts, time.monotonic() - sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="glm1m-progress-"))
    write_csv(folder / "rows.csv", args.rows)
    with demo_stack(folder, "progress-key", GLM1M_TRANSLATE_MAX_TOKENS="16") as url:
        head, counts, total = asyncio.run(run(url, folder / "rows.csv"))
    moving = [(t, n) for t, n in counts if n > 0]
    first = moving[0][0] if moving else float("nan")
    times = [t for t, _ in counts]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    steps = [b - a for (_, a), (_, b) in zip(counts, counts[1:], strict=False) if b > a]
    table = Table(title=f"The page's status during a {args.rows}-row translation (demo model, "
                        f"{platform.node()}, {os.cpu_count()} CPUs)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("sent → the job's line (file, encoding, column, languages)", f"{head:.1f} s")
    table.add_row("sent → first count above 0", f"{first:.1f} s")
    table.add_row("count updates shown", f"{len(counts)}")
    table.add_row("distinct counts shown", f"{len({n for _, n in counts})}")
    table.add_row("gap between updates: median / max", f"{statistics.median(gaps):.2f} / {max(gaps):.2f} s"
                  if gaps else "–")
    table.add_row("rows per step: median / max", f"{statistics.median(steps):.0f} / {max(steps)}"
                  if steps else "–")
    table.add_row("sent → record (Finished: …)", f"{total:.1f} s")
    Console().print(table)


if __name__ == "__main__":
    main()
