"""`glm1m grid` on N generated documents × Q questions, through the real command against a running
model server: wall time and the server's prefix-cache counters (vLLM's /metrics, before and after).

Two ways of asking the same cells, one after the other in one run:
- shared: one `glm1m grid` of every document and every question. A document's questions go in turn
  with the document first (glm1m/grid/cells.py), so each document is read once and every further
  question should be a prefix-cache hit.
- fresh: each question asked of its own copy of every document (same bytes, another file name, so
  the prompt differs from the document's name on and nothing past the system prompt is a hit), one
  `glm1m grid` per question: every cell a prompt read from its start. glm1m has no switch that asks
  without the shared prefix; this is the same number of cells without one.

Run the demo server first (CPU, ~1 min to start), then this:

    .venv/bin/glm1m serve --demo --port 8765 &
    .venv/bin/python bench/grid.py --base-url http://127.0.0.1:8765/v1
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
METRIC = re.compile(r"^(vllm:(?:prefix_cache_hits|prefix_cache_queries|prompt_tokens|request_success))_total(?:\{[^}]*\})? "
                    r"([0-9.e+-]+)$")
QUESTIONS = [  # (name, question, type): the documents answer the first four; none says the fifth
    ("budget", "What is the project's total budget, in euros?", "number"),
    ("start", "On what date does the project start?", "date"),
    ("audited", "Is the project audited by an outside firm?", "yes/no"),
    ("sites", "Which sites does the project run at?", "list"),
    ("insurer", "Which company insures the project's equipment?", "text"),
]
MANUAL_QUESTIONS = [  # (name, question, type): about any manual
    ("subject", "What program, library or format does this document describe?", "text"),
    ("version", "What is the first version number the document gives?", "text"),
    ("license", "Does the document state a license?", "yes/no"),
    ("options", "Which commands or options does the document name?", "list"),
    ("updated", "On what date was the document last updated?", "date"),
    ("author", "Who wrote or maintains it?", "text"),
]
DOCS = Path("/usr/share/doc")
SITES = ["Lyon", "Porto", "Graz", "Turku", "Brno", "Gdansk", "Aarhus", "Bilbao"]


def document(n: int, paragraphs: int) -> str:
    """A project report of `paragraphs` sections of filler with its facts spread among them."""
    facts = {3: f"The total budget of project {n} is {120_000 + 1_000 * n} euros.",
             paragraphs // 2: f"Project {n} starts on 2025-0{n % 9 + 1}-1{n % 9}.",
             paragraphs - 4: f"An outside firm {'audits' if n % 2 else 'does not audit'} project {n}.",
             paragraphs - 2: f"Project {n} runs at {SITES[n % 8]} and {SITES[(n + 3) % 8]}."}
    parts = [f"# Report on project {n}\n"]
    for i in range(paragraphs):
        parts.append(f"## Section {i + 1}\n")
        parts.append(" ".join(f"In week {w} of phase {i + 1}, team {n} logged {(n * 37 + i * 11 + w) % 97} "
                              f"tasks and reviewed {(n + i * w) % 13} plans for the steering group."
                              for w in range(1, 6)))
        if i in facts:
            parts.append(facts[i])
        parts.append("")
    return "\n".join(parts)


def manuals(count: int) -> list[Path]:
    """`count` real manuals of this machine (Debian's /usr/share/doc), one a package, HTML, Markdown or text
    of 3–16 KB (a few thousand tokens: whole in the demo's 8,192-token context), in name order."""
    found: dict[str, Path] = {}
    for path in sorted(DOCS.rglob("*")):
        package = path.relative_to(DOCS).parts[0]
        if (package not in found and path.suffix in (".html", ".txt", ".md", ".rst") and path.is_file()
                and 3_000 <= path.stat().st_size <= 16_000):
            found[package] = path
    chosen = list(found.values())
    return chosen[:: max(1, len(chosen) // count)][:count]


def metrics(base_url: str) -> dict[str, float]:
    text = urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=30).read().decode()
    found: dict[str, float] = {}
    for line in text.splitlines():
        if match := METRIC.match(line):
            found[match[1]] = found.get(match[1], 0.0) + float(match[2])
    return found


def grid(inputs: list[Path], questions: Path, output: Path, base_url: str, env: dict[str, str],
         max_tokens: int) -> tuple[float, str]:
    began = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "glm1m.cli", "grid", *map(str, inputs), "--questions",
                          str(questions), "-o", str(output), "--base-url", base_url, "--max-tokens",
                          str(max_tokens)], capture_output=True, text=True, cwd=ROOT, env=env)
    took = time.perf_counter() - began
    if run.returncode not in (0, 1):
        raise RuntimeError(run.stderr)
    return took, run.stderr.strip().splitlines()[-1]


def write_questions(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("name", "question", "type"), *rows])
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--documents", type=int, default=4)
    parser.add_argument("--paragraphs", type=int, default=22, help="~140 tokens each")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--manuals", type=int, default=0,
                        help="N real manuals of this machine × 6 questions instead of generated reports")
    args = parser.parse_args()
    questions = MANUAL_QUESTIONS if args.manuals else QUESTIONS
    work = Path(tempfile.mkdtemp(prefix="grid-bench-"))
    env = {**os.environ, "GLM1M_DATA_DIR": str(work / "data")}
    key = ROOT / "var" / "server-api-key"  # where `glm1m serve` keeps it (its data dir: the default)
    if "GLM1M_API_KEY" not in env and key.exists():
        env["GLM1M_API_KEY"] = key.read_text(encoding="utf-8").strip()
    docs = work / "docs"
    docs.mkdir()
    # In every file's name: a prompt names its document before the text, so a second run on the
    # same server finds nothing of the first in the prefix cache (measured: without it, a rerun's
    # shared way hit 97.5 % and its fresh way 48.9 %).
    run = os.urandom(3).hex()
    if args.manuals:
        paths = []
        for source in manuals(args.manuals):
            paths.append(docs / f"{run}-{source.relative_to(DOCS).parts[0]}-{source.name}")
            shutil.copy(source, paths[-1])
    else:
        paths = [docs / f"{run}-project{n}.md" for n in range(1, args.documents + 1)]
        for n, path in enumerate(paths, 1):
            path.write_text(document(n, args.paragraphs), encoding="utf-8")
    rows = []
    try:
        before = metrics(args.base_url)
        took, said = grid([docs], write_questions(work / "q.csv", questions), work / "shared.xlsx",
                          args.base_url, env, args.max_tokens)
        rows.append(("shared (one grid)", took, before, metrics(args.base_url), said))
        before = metrics(args.base_url)
        took = 0.0
        for j, question in enumerate(questions, 1):
            copies = work / f"fresh{j}"
            copies.mkdir()
            for path in paths:
                shutil.copy(path, copies / f"q{j}-{path.name}")
            spent, said = grid([copies], write_questions(work / f"q{j}.csv", [question]),
                               work / f"fresh{j}.xlsx", args.base_url, env, args.max_tokens)
            took += spent
            print(f"fresh {j}: {spent:.1f} s: {said}", flush=True)
        rows.append((f"fresh ({len(questions)} grids)", took, before, metrics(args.base_url), said))
        for path in paths:
            print(path.name, path.stat().st_size)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    table = Table(title=f"glm1m grid: {len(paths)} documents × {len(questions)} questions")
    for column in ("way", "wall s", "requests", "prompt tokens", "prefix queries", "prefix hits", "hit ratio"):
        table.add_column(column, justify="right" if column != "way" else "left")
    for way, took, before, after, _ in rows:
        moved = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
        queries, hits = moved.get("vllm:prefix_cache_queries", 0.0), moved.get("vllm:prefix_cache_hits", 0.0)
        table.add_row(way, f"{took:.1f}", f"{moved.get('vllm:request_success', 0):,.0f}",
                      f"{moved.get('vllm:prompt_tokens', 0):,.0f}", f"{queries:,.0f}",
                      f"{hits:,.0f}", f"{hits / queries:.1%}" if queries else "—")
    Console().print(table)
    for way, *_, said in rows:
        print(f"{way}: {said}")


if __name__ == "__main__":
    main()
