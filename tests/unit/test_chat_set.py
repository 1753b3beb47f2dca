"""A chat's documents grow as a set (asking.open_files with `before`): a document attached later
comes after the others, which stay the prompt's unchanged prefix; a file whose text the set holds
is not added twice; and the chat's set, kept on disk (store.py), reopens to the same prompt byte
for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glm1m.documents.answer import OpenDocument, whole_prompt
from glm1m.documents.asking import OpenedSet, ask, open_files
from glm1m.documents.formats import ReadOptions
from glm1m.documents.sets import DocumentSet
from glm1m.documents.shelf import Shelf
from glm1m.documents.store import load, load_set, save
from glm1m.llm import ChatParams
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm
from tests.unit.test_document_set_path import Recording

pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.3, max_tokens=256)


class Told(Recording):
    async def already(self, name: str, label: str) -> None:
        self.said.append(("already", name, label))


def write(tmp_path: Path, name: str, words: str) -> tuple[Path, str]:
    (tmp_path / name).write_text(f"# {name}\n\n{words}\n", encoding="utf-8")
    return tmp_path / name, name


async def opened(tmp_path: Path, llm: ScriptedLlm, files: list[tuple[Path, str]], door: Recording,
                 before: DocumentSet | None = None) -> OpenedSet:
    return await open_files(files, Shelf.of(tmp_path / "data", 100), ReadOptions(), llm,
                            Settings(data_dir=tmp_path / "data"), PARAMS.max_tokens, door, before)


async def test_a_document_added_later_comes_after_the_others_which_stay_the_prefix(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "Keys [C § 1].")
    lease = write(tmp_path, "lease.md", "Rent is due monthly.")
    notice = write(tmp_path, "notice.txt", "Three months.")
    two = await opened(tmp_path, llm, [lease, notice], Told())
    door = Told()
    three = await opened(tmp_path, llm, [write(tmp_path, "annex.md", "The annex lists the keys.")], door,
                         two.documents)
    assert [d.name for d in three.documents.documents] == ["lease.md", "notice.txt", "annex.md"]
    assert [s.text.name for s in three.shelved] == ["annex.md"]  # only the file read now
    assert door.said[-1] == ("choose", "A (lease.md), B (notice.txt) and C (annex.md)", 3)
    before = whole_prompt(two.doc.text, "Q")
    after = whole_prompt(three.doc.text, "Q")
    assert before[0] == after[0]  # the system prompt names no document
    shared = before[1]["content"].removesuffix("\n\nQuestion: Q")
    assert after[1]["content"].startswith(shared + "\n\n<document label=\"C\" name=\"annex.md\">")
    said = "".join([p async for p in ask(three.doc, "Keys?", llm, PARAMS, door, fresh=True)])
    assert [c.line.split(" · ")[:3] for c in three.documents.cited(said)] == [["C", "annex.md", "§ 1"]]


async def test_a_file_the_set_holds_already_is_named_and_not_added_again(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "ok")
    lease = write(tmp_path, "lease.md", "Rent is due monthly.")
    first = await opened(tmp_path, llm, [lease, write(tmp_path, "notice.txt", "Three months.")], Told())
    (tmp_path / "copy").mkdir()
    copy = (tmp_path / "copy" / "Copy of lease.md", "Copy of lease.md")  # the same bytes, another name
    copy[0].write_bytes(lease[0].read_bytes())
    door = Told()
    again = await opened(tmp_path, llm, [copy], door, first.documents)
    assert ("already", "Copy of lease.md", "A") in door.said
    assert again.documents == first.documents and again.doc.text == first.doc.text
    assert again.shelved == ()


async def test_the_chats_set_reopens_to_the_same_prompt_byte_for_byte(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "ok")
    files = [write(tmp_path, "lease.md", "Rent is due monthly."),
             write(tmp_path, "notice.txt", "Three months.")]
    two = await opened(tmp_path, llm, files, Told())
    path = tmp_path / "documents" / "thread" / "document.json"
    save(two.doc, path, two.documents)
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 3
    found = load_set(path)
    assert found is not None
    documents, doc = found
    assert documents == two.documents and doc == two.doc
    assert whole_prompt(doc.text, "And now?") == whole_prompt(two.doc.text, "And now?")
    assert load(path) == two.doc


async def test_a_chat_saved_with_one_document_reopens_as_a_set_of_one(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "ok")
    one = await opened(tmp_path, llm, [write(tmp_path, "lease.md", "Rent is due monthly.")], Told())
    path = tmp_path / "document.json"
    save(OpenDocument(one.doc.text, one.doc.budget, one.doc.strategy, one.doc.plan), path)  # as before sets
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 2
    found = load_set(path)
    assert found is not None and found[0] == one.documents and found[1] == one.doc
    assert load_set(tmp_path / "none.json") is None
