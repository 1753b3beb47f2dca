"""The two-column CSV (id, text) that the integration tests translate, and its translated output
read back as rows, so a test compares texts in input order."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path


def mixed(i: int) -> str:
    """Every third row Chinese, the others English: one job carries both scripts."""
    return f"第{i}行：合同第{i}条。" if i % 3 == 0 else f"row {i}: the clause number {i}."


def write_rows(path: Path, count: int, line: Callable[[int], str] = mixed) -> list[str]:
    """Write `count` rows of `line(i)` under an id,text header; return the texts in order."""
    texts = [line(i) for i in range(count)]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows([i, t] for i, t in enumerate(texts))
    return texts


def read_output(path: Path) -> list[dict[str, str]]:
    # utf-8-sig: the job writes a BOM so Excel shows Chinese (table.write_chunk).
    with path.open(encoding="utf-8-sig", newline="") as f:
        return list(csv.DictReader(f))


def csv_bytes(rows: list[list[str]], encoding: str) -> bytes:
    """`rows` as a CSV file's bytes in `encoding`."""
    text = io.StringIO(newline="")
    csv.writer(text).writerows(rows)
    return text.getvalue().encode(encoding)


def cells(path: Path) -> list[list[str]]:
    """Every cell of a CSV as glm1m reads it, its header first."""
    from glm1m.translation.table import open_source, read_chunks

    source = open_source(path)
    return [list(source.columns)] + [list(r) for c in read_chunks(source) for r in c.itertuples(index=False)]
