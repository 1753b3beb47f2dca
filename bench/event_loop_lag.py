"""Does one user's 95 MB CSV freeze another user's streaming answer? Through the real app.

Session A asks for a long answer and records when each streamed piece arrives; while it streams,
session B attaches a 95 MB one-column CSV (just under the 100 MB CSV limit). The app reads it
(encoding over the whole file, fingerprint, row count) and starts translating; B lets the job run
(its reader and fan-out on the same loop) for a few seconds, then stops. Compared side by side in
one run: the gaps between A's pieces while B's file is read against A's gaps before B began.
Starts its own demo model server and app on loopback, stops both by PID, ends by itself (every
wait is bounded).

    .venv/bin/python -m bench.event_loop_lag
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.demo_stack import demo_stack
from tests.support.chainlit_client import ChainlitSession

WAIT_S = 600
TARGET_LAG_S = 0.2
RUN_S = 8.0  # how long B's job runs on after its file was read, before B stops it


def write_csv(path: Path, megabytes: int) -> int:
    line = "第{i}条：本合同自双方签字之日起生效，任何一方不得擅自变更。Clause {i} takes effect on signing."
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["text"])
        while f.tell() < megabytes * 1_000_000:
            writer.writerows([line.format(i=rows + k)] for k in range(10_000))
            rows += 10_000
    return rows


async def streamer(url: str, arrivals: list[float], began: asyncio.Event) -> None:
    """Session A: one long answer; the arrival time of every streamed piece."""
    chat = ChainlitSession(url)
    await chat.connect()
    await chat.started(WAIT_S)
    await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 6000})
    start = chat.mark()
    await chat.send("Write a very long story.")
    seen = start
    while True:
        event = await chat.wait_for(lambda e: e.name in ("stream_start", "stream_token", "task_end"),
                                    WAIT_S, seen)
        seen = chat.index(event) + 1
        if event.name == "task_end":
            break
        arrivals.append(time.monotonic())
        began.set()
    await chat.close()


async def reader(url: str, source: Path, window: list[float]) -> None:
    """Session B: attach the CSV; the window from sending it until translation has begun."""
    chat = ChainlitSession(url)
    await chat.connect()
    await chat.started(WAIT_S)
    ref = await chat.upload(source)
    start = chat.mark()
    window.append(time.monotonic())
    await chat.send("", file_refs=[ref])
    await chat.wait_for(lambda e: e.name in ("new_message", "update_message")
                        and "translating:" in str(e.data.get("output")), WAIT_S, start)
    window.append(time.monotonic())
    await asyncio.sleep(RUN_S)  # the job runs on: its reader and fan-out share the loop
    window.append(time.monotonic())
    shown = [str(m.get("output"))[:120] for m in chat.messages(start)]
    await chat.stop()
    await chat.close()
    print("session B saw:", *shown, sep="\n  ")


def gaps(arrivals: list[float], start: float, end: float) -> list[float]:
    inside = [t for t in arrivals if start <= t <= end]
    return [b - a for a, b in zip(inside, inside[1:], strict=False)]


async def run(url: str, source: Path) -> dict:
    arrivals: list[float] = []
    window: list[float] = []
    began = asyncio.Event()
    stream = asyncio.create_task(streamer(url, arrivals, began))
    await asyncio.wait_for(began.wait(), WAIT_S)
    await asyncio.sleep(5)  # a baseline of A streaming alone (a measurement window, not a wait)
    baseline_end = time.monotonic()
    await reader(url, source, window)
    await stream
    return {"baseline": gaps(arrivals, arrivals[0], baseline_end),
            "reading": gaps(arrivals, window[0], window[1]),
            "running": gaps(arrivals, window[1], window[2]), "read_s": window[1] - window[0]}


def row(name: str, values: list[float]) -> list[str]:
    if not values:
        return [name, "0", "–", "–", "–"]
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return [name, f"{len(values)}", f"{statistics.median(values) * 1000:.0f}", f"{p99 * 1000:.0f}",
            f"{max(values) * 1000:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=95)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="glm1m-lag-"))
    rows = write_csv(folder / "big.csv", args.megabytes)
    with demo_stack(folder, "lag-test-key", GLM1M_TRANSLATE_MAX_TOKENS="8") as url:
        result = asyncio.run(run(url, folder / "big.csv"))
    size_mb = (folder / "big.csv").stat().st_size / 1e6
    table = Table(title=f"Session A's stream while session B's {size_mb:.0f} MB CSV ({rows:,} rows) is "
                        f"read ({result['read_s']:.1f} s until translating began) · {platform.node()}")
    for column in ("window", "gaps", "median ms", "p99 ms", "max ms"):
        table.add_column(column, justify="left" if column == "window" else "right")
    table.add_row(*row("A alone", result["baseline"]))
    table.add_row(*row("while B's CSV is read", result["reading"]))
    table.add_row(*row(f"while B's job runs ({RUN_S:g} s)", result["running"]))
    Console().print(table)
    worst = max(result["reading"] + result["running"], default=0.0) - max(result["baseline"], default=0.0)
    print(f"largest extra stall: {worst * 1000:.0f} ms (target: lag ≤ {TARGET_LAG_S * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
