"""`glm1m summarize` on the same file twice: time to the budget line (reading, OCR and counting
with the server's /tokenize, then the strategy) the first time, and the second time, when the
shelf gives the document back. The answer itself is not waited for: the process is stopped at the
budget line, so the figures are what the shelf changes.

Starts the vLLM demo server (CPU, 8,192-token context) on a free port and stops it on the way out.
Inputs: the first --scan-pages pages of a real manual as a scan (images only, read by OCR), and
Debian's valgrind manual (397 pages, ~710K tokens, a text layer).

    .venv/bin/python bench/shelf_revisit.py
"""

from __future__ import annotations

import argparse
import gzip
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.ocr import MANUAL, scanned_copy  # noqa: E402
from glm1m.server import launch, process  # noqa: E402
from glm1m.settings import Settings  # noqa: E402
from tests.support.service import free_port  # noqa: E402

VALGRIND = Path("/usr/share/doc/valgrind/valgrind_manual.pdf.gz")


def to_budget_line(path: Path, base_url: str, env: dict[str, str]) -> tuple[float, str]:
    """Seconds from start to glm1m's "Strategy:" line, and that line; then stops the command."""
    began = time.perf_counter()
    run = subprocess.Popen([sys.executable, "-m", "glm1m.cli", "summarize", str(path), "--max-tokens",
                            "8", "--base-url", base_url], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           text=True, cwd=ROOT, env=env)
    assert run.stderr is not None
    seen = []
    for line in run.stderr:
        seen.append(line)
        if "Strategy:" in line:
            took = time.perf_counter() - began
            run.send_signal(signal.SIGTERM)
            run.wait(60)
            return took, line.strip()
    run.wait(60)
    raise RuntimeError("".join(seen))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scan-pages", type=int, default=12)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="shelf-bench-"))
    scan = folder / "scan.pdf"
    scanned_copy(MANUAL, args.scan_pages, 200, scan)
    manual = folder / "valgrind_manual.pdf"
    manual.write_bytes(gzip.decompress(VALGRIND.read_bytes()))
    env = {**os.environ, "GLM1M_DATA_DIR": str(folder / "data")}
    os.environ.update(GLM1M_DATA_DIR=env["GLM1M_DATA_DIR"])
    settings = Settings()
    options = launch.resolve(launch.ServeOptions(demo=True, port=free_port(), max_model_len=8192,
                                                 api_key="shelf-bench"), settings)
    env["GLM1M_API_KEY"] = "shelf-bench"
    server = launch.start(options, settings, log_path=str(folder / "vllm.log"))
    try:
        launch.wait_ready(server, options, str(folder / "vllm.log"))
        base_url = f"http://127.0.0.1:{options.port}/v1"
        when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        print(f"{when}, {platform.node()}, {os.cpu_count()} CPUs, demo server (8,192-token context)")
        for path in (scan, manual):
            first, line = to_budget_line(path, base_url, env)
            second, _ = to_budget_line(path, base_url, env)
            print(f"{path.name}: first {first:.2f} s, second {second:.2f} s ({first / second:.1f}x) — {line}")
    finally:
        process.stop(server)


if __name__ == "__main__":
    main()
