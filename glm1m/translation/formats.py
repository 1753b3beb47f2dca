"""Every table format a translation job reads and writes back, the one registry: a suffix maps to
the format (source.TableFormat) whose source implements source.TableSource. job.py, the CLI, the
app's flows and its upload checks read this registry and that interface; none of them knows a
format. A new table format is one module with its TableSource and FORMAT, and one line here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from glm1m.settings import Settings
from glm1m.translation import table, xlsx
from glm1m.translation.source import TableFormat, TableSource

# A file is opened as the format its first bytes say (a workbook named .csv is the workbook it
# is), else as its name's suffix says, else as a CSV. The order is the one sentences name them in.
FORMATS: dict[str, TableFormat] = {suffix: f for f in (table.FORMAT, xlsx.FORMAT) for suffix in f.suffixes}
GLOSSARY = table.FORMAT  # the format a glossary is read in (read_glossary)
FALLBACK = table.FORMAT


def table_formats() -> tuple[TableFormat, ...]:
    """Each format once, in the registry's order."""
    return tuple(dict.fromkeys(FORMATS.values()))


def named(filename: str) -> TableFormat | None:
    """The format a file's name says (its suffix), if it is a table's."""
    return FORMATS.get(PurePosixPath(filename).suffix.lower())


def format_of(path: Path, name: str) -> TableFormat:
    """The format by the file's first bytes when a format knows them, else by its name."""
    head = b""
    if path.exists():
        with path.open("rb") as f:
            head = f.read(8)
    sniffed = next((f for f in table_formats() if f.sniff(name, head)), None)
    return sniffed or named(name) or FALLBACK


def open_table(path: Path, name: str | None = None, sheet: str | None = None,
               columns: Sequence[str] = (), settings: Settings | None = None) -> TableSource:
    """A table of any registered format (by its first bytes or its name), with the sheet and
    columns chosen (default: the sheet Excel opens on, its first text column)."""
    name = name or path.name
    return format_of(path, name).open(path, name, sheet, columns, settings)


def sheet_names(path: Path, name: str) -> tuple[str, ...]:
    """The sheets a door may ask about, the one opened by default first; () without sheets."""
    return format_of(path, name).sheet_names(path, name)


def mime_of(output: Path) -> str:
    """The type of a job's output, by its suffix."""
    return (named(output.name) or FALLBACK).mime

