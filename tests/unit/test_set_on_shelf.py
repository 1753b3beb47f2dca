"""A set asked again starts as fast as one document: its count, its prompt's ids and which server
read it are kept on the shelf (under its first document, named by a digest of its whole text), so
a set opened again sends no /tokenize of its text and says the server read it before. On one H200,
the same 883,478-token set asked again began after 7.00 s, 0.63 s of it in vLLM: the rest was
counting it again (~1.8 s) and tokenizing its prompt again (~2.3 s)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import pytest

from glm1m.cli import summarize as cli
from glm1m.documents.asking import OpenedSet, ask, open_files
from glm1m.documents.formats import ReadOptions
from glm1m.documents.sets import DocumentSet
from glm1m.documents.shelf import Shelf
from glm1m.documents.through_shelf import measure_through, read_through, set_name
from glm1m.llm import ChatParams, LlmClient
from glm1m.settings import Settings
from tests.support.fake_vllm import FakeVllm
from tests.support.scripted_llm import ScriptedLlm
from tests.unit.test_document_set_path import Recording
from tests.unit.test_revisit_wait import URL, ClosingLlm

pytestmark = pytest.mark.timeout(20)
PARAMS = ChatParams(temperature=0.0, max_tokens=64)
REPLY = "Rent [A § 1]; notice [B § 1]."
NAMES = ("lease.md", "notice.txt", "annex.md")


def write_files(tmp_path: Path) -> list[tuple[Path, str]]:
    for n, name in enumerate(NAMES):
        (tmp_path / name).write_text(f"# {name}\n\n" + f"Clause {n} is plain. " * 60, encoding="utf-8")
    return [(tmp_path / name, name) for name in NAMES]


def settings_in(tmp_path: Path) -> Settings:
    return Settings(base_url=URL, retries=0, api_key="k", data_dir=tmp_path / "data",
                    whole_document_threshold=100_000)


async def run(tmp_path: Path, files: list[tuple[Path, str]]) -> tuple[FakeVllm, Recording, OpenedSet, str]:
    """One `glm1m summarize A B C`: a new client and door, the same shelf."""
    fake = FakeVllm(reply=REPLY)
    llm = LlmClient(settings_in(tmp_path), transport=fake.transport())
    door = Recording()
    try:
        opened = await open_files(files, Shelf.of(tmp_path / "data", 100), ReadOptions(), llm,
                                  settings_in(tmp_path), PARAMS.max_tokens, door)
        said = "".join([p async for p in ask(opened.doc, "When?", llm, PARAMS, door, to=opened.to,
                                             fresh=True)])
    finally:
        await llm.aclose()
    return fake, door, opened, said


async def test_a_set_opened_again_sends_no_tokenize_of_its_text_and_knows_the_server_read_it(
        tmp_path: Path) -> None:
    files = write_files(tmp_path)
    first, first_door, opened, said = await run(tmp_path, files)
    assert said == REPLY and opened.to is not None and opened.to.before is None
    assert ("asking", True, False) in first_door.said  # a first read
    assert len(first.bodies("/tokenize")) == 4  # the set's count, the question's frame, the part, its frame

    second, door, again, said = await run(tmp_path, files)
    assert said == REPLY and again.doc.budget == opened.doc.budget
    (frame,) = second.bodies("/tokenize")  # only the question's frame: nothing of the documents
    assert "Clause" not in str(frame) and frame["add_generation_prompt"] is True
    assert second.bodies("/v1/completions")[0]["prompt"] == first.bodies("/v1/completions")[0]["prompt"]
    assert second.bodies("/v1/chat/completions") == []
    assert again.to is not None and again.to.before is not None and again.to.a_set
    assert ("asking", True, True) in door.said  # a revisit: it may start in seconds

    # Kept under the first document, in the shelf's bytes; gone with it.
    shelf = Shelf.of(tmp_path / "data", 100)
    (kept,) = list((tmp_path / "data" / "shelf").rglob("*.ids"))
    assert kept.parent.name == again.shelved[0].key.sha256
    assert next(e for e in shelf.entries() if e.name == "lease.md").bytes > kept.stat().st_size
    shelf.remove("lease.md")
    third, _, _, _ = await run(tmp_path, files)
    assert any("Clause 1" in str(b) for b in third.bodies("/tokenize"))  # counted again


async def test_a_sets_count_is_kept_per_set_text_and_served_model(tmp_path: Path) -> None:
    files = write_files(tmp_path)
    shelf = Shelf.of(tmp_path / "data", 100)
    read = [(await read_through(shelf, path, name, ReadOptions()))[0] for path, name in files]
    documents = DocumentSet(tuple(s.text for s in read))
    llm = ScriptedLlm()
    counted = await measure_through(shelf, read[0], llm, "glm", 100_000, of_set=documents.text())
    assert len(llm.counted) == 1 and "Clause 2" in llm.counted[0]
    again = await measure_through(shelf, read[0], llm, "glm", 100_000, of_set=documents.text())
    assert again == counted and len(llm.counted) == 1  # kept: not counted again
    # The first document alone keeps its own count; the set's is not it.
    alone = await measure_through(shelf, read[0], llm, "glm", 100_000)
    assert len(llm.counted) == 2 and alone.tokens < counted.tokens

    # Another order (other letters), another name, another served model: counted again.
    swapped = DocumentSet((documents.documents[1], documents.documents[0], documents.documents[2]))
    assert set_name(swapped.text()) != set_name(documents.text())
    await measure_through(shelf, read[0], llm, "glm", 100_000, of_set=swapped.text())
    renamed = DocumentSet((replace(read[0].text, name="other.md"), *documents.documents[1:]))
    await measure_through(shelf, read[0], llm, "glm", 100_000, of_set=renamed.text())
    await measure_through(shelf, read[0], llm, "glm-2", 100_000, of_set=documents.text())
    assert len(llm.counted) == 5


async def test_summarize_a_set_a_second_time_says_the_server_read_this_set_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [path for path, _ in write_files(tmp_path)]
    monkeypatch.setattr("glm1m.llm.LlmClient", lambda settings: ClosingLlm(context=32_768))
    settings = Settings(data_dir=tmp_path / "data", base_url=URL)
    args = argparse.Namespace(pdf=paths, ocr=None, question="What is due?", strategy="whole", user=None)

    await cli.summarize(args, settings)
    first = capsys.readouterr()
    assert "Until the first answer starts" in first.err and "read this set" not in first.err
    await cli.summarize(args, settings)
    again = capsys.readouterr()
    assert "This server read this set of documents before (" in again.err
    assert "Until the first answer starts" not in again.err and again.out == first.out
    # The same documents in another order are another prompt: not read before.
    args.pdf = paths[::-1]
    await cli.summarize(args, settings)
    assert "Until the first answer starts" in capsys.readouterr().err


async def test_a_removed_documents_set_note_is_a_miss_never_an_error(tmp_path: Path) -> None:
    # (A damaged note cannot be written any more: the notes are typed rows, shelf_db.py.)
    files = write_files(tmp_path)
    shelf = Shelf.of(tmp_path / "data", 100)
    shelved, _ = await read_through(shelf, *files[0], ReadOptions())
    folder = tmp_path / "data" / "shelf" / "_open" / shelved.key.sha256
    assert shelf.count(shelved.key, "glm@8192", "abc") is None
    assert shelf.sent_at(shelved.key, "glm@8192 http://x", "abc") is None
    shelf.remove("lease.md")
    shelf.keep_count(shelved.key, "glm@8192", 10, 40, "abc")  # removed meanwhile: nothing kept
    shelf.keep_sent(shelved.key, "glm@8192 http://x", 1.0, "abc")
    assert shelf.count(shelved.key, "glm@8192", "abc") is None and not folder.exists()
    assert shelf.sent_at(shelved.key, "glm@8192 http://x", "abc") is None
