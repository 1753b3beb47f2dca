"""Load through the real app: N chat sessions at once over Chainlit's socket.io protocol (as the
web page speaks it) while one more session translates a 10,000-row CSV. Starts its own demo model
server and app on loopback, stops both by PID, ends by itself (every wait is bounded).

    .venv/bin/python -m bench.app_load --sessions 100 --rows 10000

Prints errors, time to first token through the app (p50/p95/max) and the batch's rows/s; writes
JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.demo_stack import demo_stack
from tests.support.chainlit_client import ChainlitSession

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
SESSION_TIMEOUT_S = 600
BATCH_TIMEOUT_S = 1800


async def one_chat(url: str, n: int) -> dict:
    """Connect, wait for the chat to start, ask, time the first streamed token and the end."""
    chat = ChainlitSession(url)
    try:
        await chat.connect()
        await chat.started(SESSION_TIMEOUT_S)
        start = chat.mark()
        sent = time.perf_counter()
        await chat.send(f"Question {n}: what does clause {n} say?")
        first = await chat.wait_for(lambda e: e.name == "stream_start", SESSION_TIMEOUT_S, start)
        ttft = time.perf_counter() - sent
        await chat.wait_for(lambda e: e.name == "task_end", SESSION_TIMEOUT_S, chat.index(first))
        errors = [m["output"] for m in chat.messages(start) if m.get("isError")]
        return {"ttft_s": ttft, "total_s": time.perf_counter() - sent, "errors": errors}
    except Exception as error:  # noqa: BLE001 - a failed session is a result here, not a crash
        return {"errors": [repr(error)]}
    finally:
        if getattr(chat, "sio", None) is not None and chat.sio.connected:
            await chat.close()


async def one_batch(url: str, rows: int, folder: Path) -> dict:
    source = folder / "batch.csv"
    texts = [f"第{i}条：本合同自双方签字之日起生效。Clause {i} takes effect on signing." for i in range(rows)]
    with source.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows(enumerate(texts))
    chat = ChainlitSession(url)
    await chat.connect()
    await chat.started(SESSION_TIMEOUT_S)
    start = chat.mark()
    began = time.perf_counter()
    await chat.send("", file_refs=[await chat.upload(source)])
    element = await chat.wait_for(lambda e: e.name == "element"
                                  and e.data.get("name") == "batch.translated.csv", BATCH_TIMEOUT_S, start)
    seconds = time.perf_counter() - began
    out = list(csv.DictReader(io.StringIO((await chat.download(element.data)).decode("utf-8-sig"))))
    await chat.close()
    lost = rows - len({r["id"] for r in out})
    return {"rows": rows, "seconds": seconds, "rows_s": rows / seconds, "lost": lost,
            "duplicated": len(out) - len({r["id"] for r in out}),
            "failed": sum(1 for r in out if r.get("translation_error")),
            "in_order": [r["text"] for r in out] == texts}


async def run(url: str, sessions: int, rows: int, folder: Path) -> tuple[list[dict], dict]:
    batch = asyncio.create_task(one_batch(url, rows, folder))
    chats = await asyncio.gather(*(one_chat(url, n) for n in range(sessions)))
    return chats, await batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="glm1m-load-"))
    with demo_stack(folder, "load-test-key", GLM1M_MAX_TOKENS="16", GLM1M_TRANSLATE_MAX_TOKENS="8") as url:
        began = time.perf_counter()
        chats, batch = asyncio.run(run(url, args.sessions, args.rows, folder))
        wall = time.perf_counter() - began
    report(args, chats, batch, wall)


def report(args, chats: list[dict], batch: dict, wall: float) -> None:
    ttfts = sorted(c["ttft_s"] for c in chats if "ttft_s" in c)
    errors = [e for c in chats for e in c["errors"]]
    p95 = ttfts[max(0, round(0.95 * len(ttfts)) - 1)] if ttfts else float("nan")
    table = Table(title=f"{args.sessions} chat sessions at once + one {args.rows:,}-row CSV, demo server")
    for column in ("what", "value"):
        table.add_column(column)
    table.add_row("chat sessions answered", f"{len(ttfts)} of {args.sessions}")
    table.add_row("errors", str(len(errors)))
    table.add_row("TTFT through the app p50 / p95 / max", f"{statistics.median(ttfts):.2f} / {p95:.2f} / "
                  f"{ttfts[-1]:.2f} s" if ttfts else "–")
    table.add_row("batch", f"{batch['rows']:,} rows in {batch['seconds']:.0f} s "
                           f"({batch['rows_s']:.1f} rows/s)")
    table.add_row("batch rows lost / duplicated / failed / in order",
                  f"{batch['lost']} / {batch['duplicated']} / {batch['failed']} / {batch['in_order']}")
    table.add_row("wall time", f"{wall:.0f} s")
    Console().print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"app-load-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "machine": platform.node(),
                                "cpus": os.cpu_count(), "sessions": args.sessions, "chats": chats,
                                "errors": errors, "p95_ttft_s": p95, "batch": batch, "wall_s": wall},
                               indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
