"""OCR of scanned pages: pages per second with one worker process vs one per core, same pages,
one run (glm1m's `ocr_pages`, Tesseract through PyMuPDF, chi_sim+eng at 150 dpi by default).

Needs nothing running. The scanned pages are made from a real manual: its first --pages pages are
rendered at --scan-dpi (gray, as a scanner makes them) and pasted into a PDF without a text layer.
Each configuration reads the same file --rounds times, alternating, so a busy neighbour on the
machine hurts both alike. It also checks what OCR gave back: the share of the manual's own words
(of 3+ letters, from its text layer) found in the OCR text.

    .venv/bin/python bench/ocr.py
    .venv/bin/python bench/ocr.py --pdf /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf --pages 8
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pymupdf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from glm1m.documents.ocr import OcrOptions, ocr_pages  # noqa: E402

MANUAL = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")
WORD = re.compile(r"[^\W\d_]{3,}")


def scanned_copy(source: Path, pages: int, dpi: int, out: Path) -> list[str]:
    """`out`: the first `pages` pages of `source` as images only; returns their text layers."""
    texts = []
    with pymupdf.open(source) as doc, pymupdf.open() as scan:
        for page in list(doc)[:pages]:
            texts.append(page.get_text())
            image = scan.new_page(width=page.rect.width, height=page.rect.height)
            image.insert_image(image.rect, pixmap=page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY))
        scan.save(out)
    return texts


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def recall(original: str, read: str) -> float:
    wanted = [w.casefold() for w in WORD.findall(original)]
    found = {w.casefold() for w in WORD.findall(read)}
    return sum(w in found for w in wanted) / max(len(wanted), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pdf", type=Path, default=MANUAL, help="a manual with a text layer")
    parser.add_argument("--pages", type=int, default=0, help="pages to scan (default: 4 per core)")
    parser.add_argument("--scan-dpi", type=int, default=200)
    parser.add_argument("--dpi", type=int, default=150, help="OCR resolution")
    parser.add_argument("--languages", default="chi_sim+eng")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    cores = OcrOptions().worker_count(10_000)
    pages = args.pages or 4 * cores
    load_before = os.getloadavg()[0]  # other work on the machine slows both configurations
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "scan.pdf"
        originals = scanned_copy(args.pdf, pages, args.scan_dpi, path)
        pages = len(originals)
        runs: dict[int, list[float]] = {1: [], cores: []}
        cpu: dict[int, list[float]] = {1: [], cores: []}  # the workers' CPU seconds, per run
        texts: dict[int, str] = {}
        for _ in range(args.rounds):
            for workers in runs:
                options = OcrOptions(languages=args.languages, dpi=args.dpi, workers=workers)
                used = children_cpu()
                started = time.perf_counter()
                texts = ocr_pages(path, "pdf", range(pages), options, path.name)
                runs[workers].append(time.perf_counter() - started)
                cpu[workers].append(children_cpu() - used)
    print(f"{date.today()}, {platform.node()}: {cores} cores ({platform.processor() or platform.machine()}), "
          f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after; "
          f"PyMuPDF {pymupdf.__version__} (MuPDF {pymupdf.mupdf_version}), {args.languages} at "
          f"{args.dpi} dpi; {pages} pages of {args.pdf.name} scanned at {args.scan_dpi} dpi; "
          f"{args.rounds} round(s), median")
    print()
    # CPU seconds per wall second: how many cores the workers really had (others' work on a
    # shared machine takes the rest).
    print("| workers | seconds (each round) | pages/s | vs 1 worker | cores used |")
    print("|---|---|---|---|---|")
    base = statistics.median(runs[1])
    for workers, seconds in runs.items():
        median = statistics.median(seconds)
        each = " / ".join(f"{s:.1f}" for s in seconds)
        busy = sum(cpu[workers]) / sum(seconds)
        print(f"| {workers} | {median:.1f} ({each}) | {pages / median:.2f} | {base / median:.2f}x | "
              f"{busy:.2f} |")
    shares = [recall(originals[i], texts.get(i, "")) for i in range(pages)]
    print()
    print(f"words of the text layer found in the OCR text: {statistics.mean(shares):.1%} on average, "
          f"lowest page {min(shares):.1%}")


if __name__ == "__main__":
    main()
