"""One megabyte, 1024² bytes, for every GLM1M_*_MB limit and every size said beside one: the
shelf's cap (GLM1M_SHELF_MAX_MB) counted 10⁶-byte megabytes while the upload limits counted 1024²."""

from __future__ import annotations

from pathlib import Path

from glm1m.chainlit_app.upload_guard import kind_of
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import Shelf
from glm1m.documents.through_shelf import read_through
from glm1m.settings import Settings
from glm1m.sizes import KB, MB, mb, size_words


def test_a_megabyte_is_1024_squared_bytes_in_every_limit(tmp_path: Path) -> None:
    assert MB == 1024 * 1024 and KB == 1024
    settings = Settings(document_max_mb=2, csv_max_mb=2, shelf_max_mb=2, _env_file=None)
    pdf, csv = kind_of("a.pdf"), kind_of("a.csv")
    assert pdf is not None and csv is not None
    shelf = Shelf.of(tmp_path, settings.shelf_max_mb)
    assert pdf.limit(settings) == csv.limit(settings) == shelf.max_bytes == 2 * 1024 * 1024
    assert mb(shelf.max_bytes) == 2  # the cap `shelf list` and the Shelf panel show


def test_sizes_are_said_in_the_same_units() -> None:
    assert size_words(5 * MB) == "5.0 MB"
    assert size_words(100 * KB) == "100.0 KB"  # under a tenth of a megabyte (was "0.1 MB")
    assert size_words(MB // 10) == "0.1 MB"


async def test_the_full_shelfs_sentence_says_its_cap_as_the_setting_counts_it(tmp_path: Path) -> None:
    shelf = Shelf.of(tmp_path / "data", 0.01)  # GLM1M_SHELF_MAX_MB=0.01: 10,485 bytes
    assert shelf.max_bytes == 10_485
    big = tmp_path / "big.md"
    big.write_text("# Terms\n\n" + "The tenant pays on the first day of each month. " * 300)
    _, full = await read_through(shelf, big, "big.md", ReadOptions())
    assert full is not None and "of 10.2 KB kept; big.md needs 14." in str(full), str(full)
