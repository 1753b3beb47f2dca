from __future__ import annotations

from dataclasses import dataclass

import pytest

from glm1m.chainlit_app.uploads import sort_uploads
from glm1m.files import folder_name, output_stem


@dataclass
class File:
    name: str
    mime: str | None = None
    path: str | None = "/tmp/x"


def test_a_single_csv_is_the_data_whatever_its_name() -> None:
    uploads = sort_uploads([File("terms.csv")])
    assert [f.name for f in uploads.tables] == ["terms.csv"] and not uploads.glossary


def test_beside_data_a_csv_named_glossary_is_the_glossary() -> None:
    uploads = sort_uploads([File("rows.csv"), File("术语glossary.csv")])
    assert [f.name for f in uploads.tables] == ["rows.csv"]
    assert [f.name for f in uploads.glossary] == ["术语glossary.csv"]


def test_pdfs_by_extension_or_mime_and_the_rest_apart() -> None:
    uploads = sort_uploads([File("a.PDF"), File("scan", "application/pdf"), File("x.pptx")])
    assert [f.name for f in uploads.documents] == ["a.PDF", "scan"] and [f.name for f in uploads.other] == ["x.pptx"]


@pytest.mark.parametrize("sent, stem", [
    ("../../etc/passwd.csv", "passwd"), ("..\\..\\boot.csv", "boot"), ("a\x00b.csv", "a_b"),
    ("合同.csv", "合同"), ("  .csv", "upload"), ("report.final.csv", "report.final"),
])
def test_output_names_stay_in_their_folder_whatever_the_browser_sent(sent: str, stem: str) -> None:
    assert output_stem(sent) == stem


@pytest.mark.parametrize("char", [
    *map(chr, range(0x80, 0xA0)),  # C1 controls: NEL, CSI, ... (terminals act on some)
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # bidi embeddings and overrides
    "\u2066", "\u2067", "\u2068", "\u2069",  # bidi isolates
    "\u200e", "\u200f", "\u061c",  # bidi marks
    "\u2028", "\u2029",  # line and paragraph separators
])
def test_no_control_or_bidi_character_reaches_a_file_name(char: str) -> None:
    # With U+202E, "inv\u202efdp.csv" shows as "invvsc.pdf", and its result as a .pdf too.
    assert output_stem(f"inv{char}fdp.csv") == "inv_fdp"


def test_very_long_names_are_cut_to_fit_a_file_system_name() -> None:
    for sent in ("x" * 400 + ".csv", "合同" * 200 + ".csv"):
        stem = output_stem(sent)
        assert 100 < len(stem.encode("utf-8")) <= 150 and sent.startswith(stem)


def test_thread_ids_from_the_browser_never_become_paths() -> None:
    real = "36150414-47c5-49b8-8917-f1389f44e9bd"
    assert folder_name(real) == real
    for sent in ("../../etc", "a/b", "x\x00y", ".."):
        name = folder_name(sent)
        assert len(name) == 32 and name.isalnum() and name == folder_name(sent)
