"""How long `glm1m --help` and `glm1m plan` take to start, beside the bare interpreter and what
an eager CLI (every subcommand's libraries imported up front, as before the lazy imports) costs.

Needs nothing running. Each command runs --rounds times, interleaved (so machine noise falls on all
of them alike), each in a fresh process; prints the median wall time and its ratio to the bare
interpreter.

    .venv/bin/python bench/cli_startup.py
    .venv/bin/python bench/cli_startup.py --before /tmp/old   # a checkout of an older commit too
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 1.0
EAGER = ("import glm1m.cli.main, glm1m.llm, glm1m.documents.pdf, glm1m.documents.answer, "
         "glm1m.translation.job, rich.progress")
COMMANDS = {
    "python -c pass (interpreter alone)": [sys.executable, "-c", "pass"],
    "glm1m --help": [sys.executable, "-m", "glm1m.cli", "--help"],
    "glm1m plan --gpu h200": [sys.executable, "-m", "glm1m.cli", "plan", "--gpu", "h200"],
    "eager imports (the old CLI's cost)": [sys.executable, "-c", EAGER],
}


def wall_s(cmd: list[str], cwd: Path = ROOT) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of an older commit: its `glm1m --help` runs in the same rounds")
    args = parser.parse_args()
    commands = {name: (cmd, ROOT) for name, cmd in COMMANDS.items()}
    if args.before:
        commands[f"glm1m --help at {args.before}"] = ([sys.executable, "-m", "glm1m.cli", "--help"],
                                                      args.before)
    for cmd, cwd in commands.values():  # warm the page cache and .pyc files once
        wall_s(cmd, cwd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.rounds):
        for name, (cmd, cwd) in commands.items():
            times[name].append(wall_s(cmd, cwd))
    base = statistics.median(times[next(iter(COMMANDS))])
    table = Table(title=f"CLI start, median of {args.rounds} runs, {date.today()}, "
                        f"{platform.node()}, Python {platform.python_version()}")
    for column in ("command", "median s", "× interpreter", f"≤ {TARGET_S:g} s"):
        table.add_column(column, justify="left" if column == "command" else "right")
    for name, runs in times.items():
        median = statistics.median(runs)
        table.add_row(name, f"{median:.3f}", f"{median / base:.1f}", "yes" if median <= TARGET_S else "no")
    Console().print(table)


if __name__ == "__main__":
    main()
