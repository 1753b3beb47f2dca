"""The shelf keeps each document read once per user: the same bytes under another name start at
once, a changed byte or another OCR choice reads again, users never share, the cap refuses with
the sentence that says what to delete, rm removes the files, and damage means a new read."""

from __future__ import annotations

from pathlib import Path

import pytest

from glm1m.catalog import ZH
from glm1m.documents import through_shelf
from glm1m.documents.formats import ReadOptions
from glm1m.documents.ocr import OcrMode, OcrOptions
from glm1m.documents.shelf import NotOnShelf, Shelf
from glm1m.documents import shelf_db
from glm1m.documents.shelf_db import db_path
from glm1m.documents.through_shelf import measure_through, read_through
from tests.support.pdfs import make_pdf, words_page
from tests.support.scripted_llm import ScriptedLlm

OPTIONS = ReadOptions()
TEXT = "# Terms\n\nThe tenant pays on the first day of each month.\n\n# Notice\n\nThree months.\n"


def write(path: Path, text: str = TEXT) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names read_document was asked to read (a hit asks for none)."""
    asked: list[str] = []
    real = through_shelf.read_document_async

    async def counting(path, options, name, on_progress):
        asked.append(name)
        return await real(path, options, name, on_progress)

    monkeypatch.setattr(through_shelf, "read_document_async", counting)
    return asked


async def test_the_same_bytes_under_another_name_are_neither_read_nor_counted_again(
        tmp_path: Path, reads: list[str]) -> None:
    shelf = Shelf.of(tmp_path / "data", 100)
    llm = ScriptedLlm()
    first, _ = await read_through(shelf, write(tmp_path / "lease.md"), "lease.md", OPTIONS)
    budget = await measure_through(shelf, first, llm, "glm", 6000)
    counted = len(llm.counted)
    again, full = await read_through(shelf, write(tmp_path / "copy.md"), "Copy of lease.md", OPTIONS)
    assert (first.hit, again.hit, full) == (False, True, None)
    assert again.text.name == "Copy of lease.md" and again.text.pages == first.text.pages
    assert await measure_through(shelf, again, llm, "glm", 6000) == budget
    assert reads == ["lease.md"] and len(llm.counted) == counted > 0
    # Another served context (another deployment under the same name) counts again.
    llm.context = 1_048_576
    await measure_through(shelf, again, llm, "glm", 6000)
    assert len(llm.counted) > counted


async def test_a_changed_byte_reads_again(tmp_path: Path, reads: list[str]) -> None:
    shelf = Shelf.of(tmp_path / "data", 100)
    await read_through(shelf, write(tmp_path / "a.md"), "a.md", OPTIONS)
    changed, _ = await read_through(shelf, write(tmp_path / "a.md", TEXT.replace("Three", "Four")),
                                    "a.md", OPTIONS)
    assert not changed.hit and "Four months" in changed.text.marked_text()
    assert reads == ["a.md", "a.md"] and len(shelf.entries()) == 2


async def test_another_ocr_choice_reads_again_and_both_stay_kept(tmp_path: Path, reads: list[str]) -> None:
    shelf = Shelf.of(tmp_path / "data", 100)
    pdf = make_pdf(tmp_path / "scan.pdf", [words_page(1, 60)])
    never = ReadOptions(ocr=OcrOptions(OcrMode.NEVER))
    auto = ReadOptions(ocr=OcrOptions(OcrMode.AUTO))
    hits = [(await read_through(shelf, pdf, "scan.pdf", options))[0].hit
            for options in (auto, never, auto, never)]
    assert hits == [False, False, True, True] and reads == ["scan.pdf", "scan.pdf"]
    assert len(shelf.entries()) == 1  # one document, two ways of reading it


async def test_users_never_share_a_shelf(tmp_path: Path, reads: list[str]) -> None:
    data = tmp_path / "data"
    path = write(tmp_path / "a.md")
    for user in ("alice", "bob", None):
        shelved, _ = await read_through(Shelf.of(data, 100, user), path, "a.md", OPTIONS)
        assert not shelved.hit
    assert reads == ["a.md"] * 3
    alice, bob = Shelf.of(data, 100, "alice"), Shelf.of(data, 100, "bob")
    assert alice.root != bob.root and "alice" not in str(alice.root)  # a name is never a path
    with pytest.raises(NotOnShelf):
        Shelf.of(data, 100, "../alice").remove("a.md")
    bob.remove("a.md")
    assert [e.name for e in alice.entries()] == ["a.md"] and bob.entries() == []


async def test_past_the_cap_it_is_read_not_kept_and_the_sentence_says_what_to_delete(
        tmp_path: Path, reads: list[str]) -> None:
    shelf = Shelf(tmp_path / "shelf", max_bytes=2500, user="alice")
    kept, _ = await read_through(shelf, write(tmp_path / "big.md", TEXT * 10), "big.md", OPTIONS)
    assert [e.name for e in shelf.entries()] == ["big.md"] and shelf.used_bytes() > 1000
    shelved, full = await read_through(shelf, write(tmp_path / "more.md", TEXT * 12), "more.md", OPTIONS)
    assert full is not None and not shelved.hit and "tenant pays" in shelved.text.marked_text()
    assert "more.md is read but not kept" in str(full)
    assert "`glm1m shelf rm NAME --user alice`" in str(full) and "big.md (" in str(full)
    assert [e.name for e in shelf.entries()] == ["big.md"]
    chinese = full.in_language(ZH)  # the page's sentence for a Chinese browser, fields kept
    assert "文档架已满" in chinese and "`glm1m shelf rm NAME --user alice`" in chinese
    assert "big.md (" in chinese
    again, _ = await read_through(shelf, tmp_path / "more.md", "more.md", OPTIONS)
    assert not again.hit and reads == ["big.md", "more.md", "more.md"]


async def test_rm_by_name_or_hash_prefix_removes_the_files(tmp_path: Path) -> None:
    shelf = Shelf.of(tmp_path / "data", 100)
    a, _ = await read_through(shelf, write(tmp_path / "a.md"), "a.md", OPTIONS)
    await read_through(shelf, write(tmp_path / "b.md", TEXT + "b"), "b.md", OPTIONS)
    assert shelf.remove("a.md").sha256 == a.key.sha256
    assert not (shelf.root / a.key.sha256).exists()
    b = shelf.entries()[0]
    shelf.remove(b.sha256[:8])
    assert shelf.entries() == [] and list(shelf.root.iterdir()) == []
    with pytest.raises(NotOnShelf, match="glm1m shelf list"):
        shelf.remove("a.md")


@pytest.mark.parametrize("damage", ["database", "text", "missing text"])
async def test_a_damaged_entry_is_read_again_not_a_traceback(tmp_path: Path, reads: list[str],
                                                             damage: str) -> None:
    shelf = Shelf.of(tmp_path / "data", 100)
    first, _ = await read_through(shelf, write(tmp_path / "a.md"), "a.md", OPTIONS)
    folder = shelf.root / first.key.sha256
    text_file = folder / f"{first.key.read_digest}.json"
    if damage == "database":  # no database at all, as the next process finds it: moved aside, made anew
        shelf_db._drop_anchor(db_path(shelf.root))  # this process's idle connection, closed
        db_path(shelf.root).write_bytes(b"{not a database" * 100)
    elif damage == "text":
        text_file.write_text('{"format": 2, "pages": [[1]]}')
    else:
        text_file.unlink()
    assert len(shelf.entries()) == 1  # listed, not a traceback
    again, _ = await read_through(shelf, tmp_path / "a.md", "a.md", OPTIONS)
    assert not again.hit and again.text.pages == first.text.pages and reads == ["a.md", "a.md"]
    third, _ = await read_through(shelf, tmp_path / "a.md", "a.md", OPTIONS)
    assert third.hit  # written anew
    if damage == "database":
        assert db_path(shelf.root).with_suffix(".db.damaged").exists()  # kept to look into
