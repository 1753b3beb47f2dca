"""A JSON-lines sidecar that records every finished row, so a killed job resumes where it stopped.

One line per row, flushed as it is written; a line cut short by a kill is ignored on reading, and
that row is simply translated again (it was never recorded, so nothing is translated twice).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from glm1m.errors import TableError
from glm1m.translation.fanout import Result
from glm1m.translation.source import hash_file


def fingerprint(input_path: Path, settings: dict[str, object]) -> str:
    """Identity of a job: the input's bytes and the settings that change its output."""
    return fingerprint_of(hash_file(input_path), settings)


def fingerprint_of(content: Any, settings: dict[str, object]) -> str:
    """fingerprint() from a hashlib object already fed the input's bytes (TableSource.content)."""
    content.update(json.dumps(settings, sort_keys=True, ensure_ascii=False).encode())
    return str(content.hexdigest())


class Checkpoint:
    def __init__(self, path: Path, job_id: str) -> None:
        self.path = path
        self.job_id = job_id
        self.results: dict[int, Result] = {}
        self._file: IO[str] | None = None

    @classmethod
    def open(cls, path: Path, job_id: str) -> Checkpoint:
        checkpoint = cls(path, job_id)
        if path.exists():
            checkpoint._load()
        checkpoint._file = path.open("a", encoding="utf-8")
        if path.stat().st_size == 0:
            checkpoint._write({"job": job_id})
        elif not _ends_with_newline(path):
            # A kill cut the last line short: end it, or the next record would be glued onto it
            # and lost with it on the next reading.
            checkpoint._file.write("\n")
        return checkpoint

    @classmethod
    def count_translated(cls, path: Path, job_id: str) -> int:
        """The cells a checkpoint holds translated, read without opening it for the next run."""
        checkpoint = cls(path, job_id)
        if path.exists():
            checkpoint._load()
        return sum(1 for r in checkpoint.results.values() if r.error is None)

    def _load(self) -> None:
        with self.path.open(encoding="utf-8") as f:
            lines = f.read().splitlines()
        if not lines:
            return
        header = _parse(lines[0])
        if header is None and len(lines) == 1:  # the header itself was cut short: nothing was done
            self.path.write_text("", encoding="utf-8")
            return
        if header is None or header.get("job") != self.job_id:
            raise TableError(key="checkpoint_other", name=self.path.name)
        for line in lines[1:]:
            record = _parse(line)
            if record is not None:
                self.results[record["i"]] = Result(record["i"], record.get("t"), record.get("e"))

    def record(self, result: Result) -> None:
        self.results[result.index] = result
        self._write({"i": result.index, "t": result.translation, "e": result.error})

    def _write(self, record: dict) -> None:
        assert self._file is not None
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def translated(self, index: int) -> bool:
        result = self.results.get(index)
        return result is not None and result.error is None

    def close(self, remove: bool = False) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        if remove:
            os.remove(self.path)


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def _parse(line: str) -> dict | None:
    try:
        record = json.loads(line)
    except json.JSONDecodeError:
        return None  # the last line of a killed run may be cut short
    return record if isinstance(record, dict) else None
