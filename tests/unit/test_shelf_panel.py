"""The shelf on the page, without a server: what the Shelf command lists in both languages, the
shelf's latest read of a document by its hash, and a chat's set with one taken out (those after
it move up a letter) counted again on the one document path (asking.settle)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.chainlit_app.shelf_panel import in_chat, listing, named_like
from glm1m.documents.asking import settle
from glm1m.documents.formats import ReadOptions
from glm1m.documents.sets import DocumentSet
from glm1m.documents.shelf import Entry, Shelf
from glm1m.documents.through_shelf import read_through
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm
from tests.unit.test_chat_set import Told, write
from tests.unit.test_set_words import NOTES, REPORT, SET

pytestmark = pytest.mark.timeout(10)
ADDED = 1_764_000_000.0
ENTRIES = [Entry("a" * 64, "report.pdf", ADDED, 4000, 3, "pages", {"glm@8192": 1234}),
           Entry("b" * 64, "notes.md", ADDED, 900, 1, "sections", {})]


def test_the_shelf_command_lists_the_chats_documents_and_the_shelf_in_both_languages() -> None:
    shown = listing(EN, SET, ENTRIES, "glm@8192", 0.0049, 1000)
    assert shown.startswith("**This chat's documents:**\n- A · report.pdf — 3 pages\n"
                            "- B · notes.md — 1 section\n")
    assert "**Your shelf** (2 documents, 0.0 of 1,000 MB):" in shown
    assert "- report.pdf — 3 pages, 1,234 tokens, added " in shown
    assert "- notes.md — 1 section, not counted for this server yet, added " in shown
    zh = listing(ZH, None, ENTRIES, "glm@8192", 0.0049, 1000)
    assert zh.startswith("此对话还没有文档。\n\n**你的文档架**（2 份文档，已用 0.0 / 1,000 MB）：")
    assert "- report.pdf — 3 页，1,234 个词元，" in zh and "- notes.md — 1 节，尚未按此服务器统计词元，" in zh
    assert "Empty: documents you attach are kept here" in listing(EN, None, [], "glm@8192", 0, 1000)


def test_the_words_sent_with_the_command_pick_what_is_listed_else_all() -> None:
    assert [e.name for e in named_like(ENTRIES, "NOTES")] == ["notes.md"]
    assert [e.name for e in named_like(ENTRIES, "list")] == ["report.pdf", "notes.md"]  # names none: all


async def test_a_document_taken_out_moves_the_later_ones_up_and_the_set_is_counted_again(
        tmp_path: Path) -> None:
    three = SET.with_document(REPORT)
    left = three.without("A")
    assert [d.name for d in left.documents] == ["notes.md", "report.pdf"] and left.labels == ("A", "B")
    assert three.without("C").documents == (REPORT, NOTES)
    llm = ScriptedLlm(reply=lambda messages: "ok")
    door = Told()
    settled = await settle(left, [], Shelf.of(tmp_path, 100), llm, Settings(data_dir=tmp_path), 256, door)
    assert settled.doc.text == left.text() and door.said == [("choose", "A (notes.md) and B (report.pdf)", 4)]


async def test_the_shelf_gives_back_a_document_by_its_hash_under_its_first_name(tmp_path: Path) -> None:
    shelf = Shelf.of(tmp_path / "data", 100)
    path, name = write(tmp_path, "lease.md", "Rent is due monthly.")
    kept, _ = await read_through(shelf, path, name, ReadOptions())
    found = shelf.latest(kept.key.sha256)
    assert found is not None and found.hit and found.text == kept.text and found.text.name == "lease.md"
    shelf.remove(kept.key.sha256)
    assert shelf.latest(kept.key.sha256) is None


async def test_a_shelf_document_in_the_chat_is_known_by_its_content_whatever_its_name(tmp_path: Path) -> None:
    """The list offers no "Add" for these (show): they have "Take … out" already."""
    shelf = Shelf.of(tmp_path / "data", 100)
    lease, _ = await read_through(shelf, *write(tmp_path, "lease.md", "Rent is due monthly."), ReadOptions())
    other, _ = await read_through(shelf, *write(tmp_path, "other.md", "Rent is due weekly."), ReadOptions())
    entries = shelf.entries()
    assert await in_chat(shelf.aio, entries, None) == set()
    assert await in_chat(shelf.aio, entries, DocumentSet((lease.text,))) == {lease.key.sha256}
    renamed = replace(lease.text, name="copy.md")  # the same text under another name is the same document
    assert await in_chat(shelf.aio, entries, DocumentSet((other.text, renamed))) == {
        lease.key.sha256, other.key.sha256}
    assert await in_chat(shelf.aio, entries, SET) == set()
