"""The one interface every table format implements (CSV in table.py, XLSX in xlsx.py), and the
descriptor each registers in formats.FORMATS by its suffixes. job.py, the CLI and the app work on a
TableSource only; no code outside a format's own modules asks which format a source is.

A source is opened once (its encoding or container checked, its header found, its columns
chosen); after that the cells stream from the file as often as a job needs them, never whole.
"""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from glm1m.catalog import Said, said

if TYPE_CHECKING:
    from glm1m.settings import Settings
    from glm1m.translation.fanout import Result

Opener = Callable[[Path, str, "str | None", Sequence[str], "Settings | None"], "TableSource"]


@dataclass(frozen=True)
class TableFormat:
    """A table format as the registry knows it: what the upload checks, the CLI and the flows
    need without opening a file."""
    name: str  # as a sentence says it
    suffixes: tuple[str, ...]  # the first is the output's
    mimes: tuple[str, ...]  # the first is the type an upload of it is stored with
    limit_setting: str  # the Settings field holding the upload limit, in MB
    use: str  # what glm1m does with it, for the upload sentences: a glm1m/catalog id
    open: Opener  # (path, name, sheet, columns, settings): checked, its columns chosen
    sheet_names: Callable[[Path, str], tuple[str, ...]]  # () for a format without sheets
    sniff: Callable[[str, bytes], bool]  # by a name and first bytes no suffix of it explains

    @property
    def mime(self) -> str:
        return self.mimes[0]


@dataclass(frozen=True)
class Reading:
    """How a source is read, as fields a door words in its own language: a workbook's sheet, or a
    text table's encoding, delimiter and header row (`layout`: the catalog's words for the last
    two, "" for a comma and the first row)."""
    sheet: str | None = None
    encoding: str = ""
    delimiter: str = ","
    header_row: int = 1
    layout: Said | str = ""


class TableSource(ABC):
    """An opened table with the columns to translate. Cells are numbered row by row: cell index =
    data row * columns chosen + the column's place among them."""

    format: ClassVar[TableFormat]
    path: Path
    name: str  # as the user knows the file (an upload is stored under another name)
    columns: tuple[str, ...]
    chosen: tuple[str, ...]  # the columns to translate, in the order asked

    @property
    def shown_name(self) -> str:
        return self.name or self.path.name

    @property
    def column(self) -> str:
        return self.chosen[0]

    @property
    def unit(self) -> str:
        return "rows" if len(self.chosen) == 1 else "cells"

    @property
    def output_suffix(self) -> str:
        return self.format.suffixes[0]

    @property
    def mime(self) -> str:
        return self.format.mime

    def label(self, column: str) -> str:
        """A column as a button names it."""
        return column

    def describe_said(self) -> Said:
        """What will be read and translated, for the line a door shows first, by id."""
        return said("table_describe", what=self.read_as_said(), count=len(self.chosen),
                    columns=[repr(c) for c in self.chosen])

    def cell_count(self) -> int:
        """The cells to translate (the rows, with one column chosen)."""
        return self.data_rows() * len(self.chosen)

    def content(self) -> Any:
        """A hashlib object fed the input's bytes (reused from opening while the file's size and
        time are as they were then; else the file is read again)."""
        opened = self.opened_digest()
        if opened is not None and opened[0] == stamp(self.path):
            return opened[1].copy()
        return hash_file(self.path)

    def opened_digest(self) -> tuple[tuple[int, int], Any] | None:
        """The file's stamp and bytes' digest taken while it was opened, if they were."""
        return None

    @abstractmethod
    def read_as_said(self) -> Said:
        """"data.csv as UTF-8", "sheet 'Data' of book.xlsx": how it is read, by id."""

    @property
    @abstractmethod
    def reading(self) -> Reading: ...

    @abstractmethod
    def with_columns(self, columns: Sequence[str]) -> Self:
        """The same source translating `columns` (each one of `columns`, in the order given)."""

    @abstractmethod
    def text_columns(self) -> tuple[str, ...]:
        """The columns with text in their first rows (found when the source was opened): the ones
        worth offering. A column of numbers, dates or empty cells has nothing to translate."""

    @abstractmethod
    def data_rows(self) -> int:
        """The data rows below the header."""

    @abstractmethod
    def cell_chunks(self) -> Iterator[list[str]]:
        """Every chosen cell's text in index order, a chunk of rows at a time."""

    @abstractmethod
    def key_settings(self) -> dict[str, object]:
        """What of the source, besides its bytes, makes two jobs the same."""

    @abstractmethod
    def write_output(self, results: Mapping[int, Result], into: Path, language: str,
                     not_reached: str) -> None:
        """The output in the input's format, written into `into` (the caller moves it into place)."""

    @abstractmethod
    def is_finished(self, output: Path) -> bool:
        """Whether `output` holds this job's result with every cell translated."""


def stamp(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns


def hash_file(path: Path) -> Any:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest
