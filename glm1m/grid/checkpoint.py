"""A grid's checkpoint: a JSON-lines file beside the output recording every finished document's
row, so a stopped or killed job asks none of a finished document's questions again.

As the translation checkpoint (translation/checkpoint.py): one line a row, flushed as written; a
line cut short by a kill is ignored on reading, and that document is asked again. The first line
names the job (its questions and how documents are read); a checkpoint of another job is refused,
not mixed in. A row is kept under its file's sha256, so a document changed since is asked again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from glm1m.errors import GridError
from glm1m.grid.cells import Cell, Row
from glm1m.grid.citations import Passage
from glm1m.grid.questions import Question


def checkpoint_path(output: Path) -> Path:
    return output.with_name(output.name + ".progress.jsonl")


def job_id(questions: tuple[Question, ...], reading: Mapping[str, object]) -> str:
    """The job's identity: its questions (words, names, types) and what changes the answers."""
    what = {"questions": [[q.text, q.name, q.type.value if q.type else None] for q in questions],
            **reading}
    return hashlib.sha256(json.dumps(what, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def kept(output: Path) -> int:
    """How many documents the checkpoint beside `output` keeps: those the next run of its job
    asks nothing of (0 when there is none). Read only: a running job may be writing it."""
    path = checkpoint_path(output)
    lines = path.read_text(encoding="utf-8").splitlines()[1:] if path.exists() else []
    return len({row.key for line in lines if (record := parse(line)) is not None
                and (row := row_of(record)) is not None})


class GridCheckpoint:
    def __init__(self, path: Path, job: str) -> None:
        self.path = path
        self.job = job
        self.rows: dict[str, Row] = {}  # by the document's sha256
        self._file: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, job: str) -> GridCheckpoint:
        checkpoint = cls(path, job)
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        header = parse(lines[0]) if lines else None
        if lines and header is None and len(lines) == 1:
            lines = []  # the header itself was cut short: nothing was done
        elif lines and (header is None or header.get("job") != job):
            raise GridError(key="grid_checkpoint_other", name=path.name)
        for line in lines[1:]:
            if (record := parse(line)) is not None and (row := row_of(record)) is not None:
                checkpoint.rows[row.key] = row
        checkpoint._file = path.open("w", encoding="utf-8")  # written again whole: no cut lines left
        checkpoint._write({"job": job})
        for row in checkpoint.rows.values():
            checkpoint._write(asdict(row))
        return checkpoint

    def record(self, row: Row) -> None:
        """Keep a complete row (Row.complete); another is asked again by the next run."""
        if row.complete:
            self.rows[row.key] = row
            self._write(asdict(row))

    def finished(self, key: str) -> Row | None:
        return self.rows.get(key)

    def _write(self, record: dict[str, Any]) -> None:
        assert self._file is not None
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self, remove: bool = False) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if remove:
            self.path.unlink(missing_ok=True)


def parse(line: str) -> dict[str, Any] | None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None  # the last line of a killed run may be cut short
    return record if isinstance(record, dict) else None


def row_of(record: dict[str, Any]) -> Row | None:
    """asdict(row)'s inverse; None for a record it did not write."""
    try:
        cells = tuple(Cell(c["text"], tuple(c["problems"]), c["failed"],
                           tuple(Passage(**p) for p in c["passages"]), c.get("absent", False))
                      for c in record["cells"])
        return Row(record["document"], record["key"], cells, record["problem"])
    except (KeyError, TypeError):
        return None
