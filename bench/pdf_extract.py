"""PDF text extraction: glm1m's `extract()` vs a bare PyMuPDF page loop, same file, one run.

Needs nothing running. Without --pdf it writes a 1,000-page PDF of mixed English/Chinese
paragraphs into a temp folder. Then it alternates the two paths for --rounds rounds, each
measurement in a fresh spawned process (so one path's caches and heap never help the other), and
prints pages/s and peak RSS per path; writes JSON to bench/results/.

    .venv/bin/python bench/pdf_extract.py
    .venv/bin/python bench/pdf_extract.py --pdf ~/manuals/big.pdf
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import resource
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path

import pymupdf
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PAGES = 1000
TARGET_RATIO = 0.8
TARGET_RSS_MB = 500
PARAGRAPHS = (
    "Clause {n}. The Supplier shall deliver the goods described in Schedule A no later than the "
    "delivery date, and shall bear all risk of loss until the goods are accepted in writing.",
    "第{n}条 供方应在交货日期前交付附件A所述货物，并在需方书面验收前承担货物灭失的全部风险。"
    "如因不可抗力导致延迟，供方应在三个工作日内书面通知需方。",
    "Payment of invoice {n} is due within thirty (30) days; late amounts carry interest at 0.05% "
    "per day. 逾期付款按每日万分之五计收违约金。",
    "本协议受中华人民共和国法律管辖。Any dispute arising from section {n} shall first be settled "
    "by friendly negotiation; failing that, by the court where the Buyer is domiciled.",
)


@dataclass(frozen=True)
class Measurement:
    path: str  # "raw" or "extract"
    pages: int
    seconds: float
    cpu_seconds: float  # this process's CPU time: steadier than wall time on a shared machine
    chars: int
    rss_start_mb: float  # after imports, before opening the PDF
    rss_peak_mb: float  # VmHWM: this process's own high-water mark
    ru_maxrss_mb: float  # what getrusage says; see peak_rss_mb()

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.seconds

    @property
    def pages_per_cpu_s(self) -> float:
        return self.pages / self.cpu_seconds


def write_sample(path: Path, pages: int) -> None:
    doc = pymupdf.open()
    for n in range(1, pages + 1):
        page = doc.new_page()
        text = "\n\n".join(p.format(n=n) for p in PARAGRAPHS * 2)
        # insert_textbox writes nothing at all, silently, when the text overflows the box.
        left = page.insert_textbox(page.rect + (56, 56, -56, -56), text, fontname="china-s",
                                   fontsize=10)
        if left < 0:
            raise RuntimeError(f"sample text does not fit on a page ({left:.0f} pt over)")
    doc.save(path, garbage=3, deflate=True)
    doc.close()


def peak_rss_mb() -> float:
    """VmHWM of this process. Not ru_maxrss: Linux carries the parent's high-water mark across
    fork+exec into it, so a spawned child reported the parent's 148 MB before doing anything."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def ru_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def measure(kind: str, pdf_path: str) -> Measurement:
    """Runs in a fresh spawned process: imports first, so the clock and RSS start are fair."""
    from glm1m.documents.pdf import extract

    start_rss = peak_rss_mb()
    started, cpu_started = time.perf_counter(), time.process_time()
    if kind == "raw":
        chars = pages = 0
        with pymupdf.open(pdf_path) as doc:
            for page in doc:
                chars += len(page.get_text())
                pages += 1
    else:
        text = extract(Path(pdf_path))
        chars, pages = text.chars, text.page_count
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    return Measurement(kind, pages, seconds, cpu_seconds, chars, start_rss, peak_rss_mb(),
                       ru_maxrss_mb())


def in_fresh_process(kind: str, pdf_path: Path) -> Measurement:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(measure, (kind, str(pdf_path)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, default=None, help="a real PDF (default: generate one)")
    parser.add_argument("--pages", type=int, default=PAGES, help="pages of the generated PDF")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="glm1m-bench-pdf-") as work:
        pdf_path = args.pdf
        if pdf_path is None:
            pdf_path = Path(work) / "sample.pdf"
            started = time.perf_counter()
            write_sample(pdf_path, args.pages)
            print(f"wrote a {args.pages}-page sample ({pdf_path.stat().st_size / 1e6:.1f} MB) "
                  f"in {time.perf_counter() - started:.1f}s")
        raw: list[Measurement] = []
        app: list[Measurement] = []
        for _ in range(args.rounds):  # alternate, so drift on a shared machine hits both alike
            raw.append(in_fresh_process("raw", pdf_path))
            app.append(in_fresh_process("extract", pdf_path))
        report(pdf_path, args.pdf is None, raw, app)


def median(runs: list[Measurement], cpu: bool = False) -> float:
    return statistics.median(m.pages_per_cpu_s if cpu else m.pages_per_s for m in runs)


def report(pdf_path: Path, generated: bool, raw: list[Measurement], app: list[Measurement]) -> None:
    ratio = median(app) / median(raw)
    cpu_ratio = median(app, cpu=True) / median(raw, cpu=True)
    peak = {"raw": max(m.rss_peak_mb for m in raw), "extract": max(m.rss_peak_mb for m in app)}
    table = Table(title=f"{pdf_path.name}: {raw[0].pages:,} pages, {pdf_path.stat().st_size / 1e6:.1f} "
                        f"MB, {len(raw)} rounds alternating, load avg {os.getloadavg()[0]:.1f} "
                        f"on {len(os.sched_getaffinity(0))} CPUs")
    for column in ("path", "pages/s per round", "median pages/s", "median pages/CPU-s",
                   "peak RSS MB (after imports)"):
        table.add_column(column, justify="left" if column == "path" else "right")
    for label, runs in (("PyMuPDF page loop", raw), ("glm1m extract()", app)):
        table.add_row(label, ", ".join(f"{m.pages_per_s:,.0f}" for m in runs),
                      f"{median(runs):,.0f}", f"{median(runs, cpu=True):,.0f}",
                      f"{max(m.rss_peak_mb for m in runs):.0f} ({runs[0].rss_start_mb:.0f})")
    table.add_row("extract / raw", f"target ≥ {TARGET_RATIO}", f"{ratio:.2f}", f"{cpu_ratio:.2f}",
                  f"target < {TARGET_RSS_MB}")
    Console().print(table)
    ok = ratio >= TARGET_RATIO and peak["extract"] < TARGET_RSS_MB
    print("targets met" if ok else "TARGETS MISSED")
    RESULTS.mkdir(parents=True, exist_ok=True)
    result = {
        "date": date.today().isoformat(), "machine": platform.node(),
        "cpu_count": len(os.sched_getaffinity(0)), "load_avg_1m": os.getloadavg()[0],
        "pymupdf": pymupdf.VersionBind, "mupdf": pymupdf.VersionFitz,
        "pdf": str(pdf_path), "generated": generated, "pages": raw[0].pages,
        "bytes": pdf_path.stat().st_size,
        "raw": [asdict(m) for m in raw], "extract": [asdict(m) for m in app],
        "raw_median_pages_s": median(raw), "extract_median_pages_s": median(app),
        "ratio": ratio, "cpu_ratio": cpu_ratio, "peak_rss_mb": peak, "targets_met": ok,
    }
    path = RESULTS / f"pdf-extract-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
