"""Several files opened together on the one document path (asking.open_files), against a scripted
model client: each read through the shelf once, in the order given, then asked as one set."""

from __future__ import annotations

from pathlib import Path

import pytest

from glm1m.documents.asking import Door, OpenedSet, ask, open_files
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import Shelf
from glm1m.llm import ChatParams
from glm1m.progress import Progress
from glm1m.settings import Settings
from tests.support.scripted_llm import ScriptedLlm
from tests.unit.test_document_path import Recording as PathRecording

pytestmark = pytest.mark.timeout(10)
PARAMS = ChatParams(temperature=0.3, max_tokens=256)


class Recording(PathRecording):
    """test_document_path's recording door, without progress; its choice notes the set's pages."""

    def progress(self, progress: Progress) -> None:
        pass

    async def choose(self, name: str, budget: Budget, answer_tokens: int, before: float | None
                     ) -> Strategy:
        self.said.append(("choose", name, budget.pages))
        return budget.default(answer_tokens)


def files(tmp_path: Path) -> list[tuple[Path, str]]:
    written = []
    for name, words in [("lease.md", "Rent is due monthly."), ("notice.txt", "Notice takes three months."),
                        ("annex.md", "The annex lists the keys.")]:
        (tmp_path / name).write_text(f"# {name}\n\n{words}\n", encoding="utf-8")
        written.append((tmp_path / name, name))
    return written


async def opened(tmp_path: Path, llm: ScriptedLlm, door: Door) -> OpenedSet:
    return await open_files(files(tmp_path), Shelf.of(tmp_path / "data", 100), ReadOptions(), llm,
                            Settings(data_dir=tmp_path / "data"), PARAMS.max_tokens, door)


async def test_each_file_is_read_once_in_order_then_the_set_is_asked_as_one(tmp_path: Path) -> None:
    llm = ScriptedLlm(reply=lambda messages: "Rent [A § 1]; notice [B § 1].")
    door = Recording()
    first = await opened(tmp_path, llm, door)
    names = ["lease.md", "notice.txt", "annex.md"]
    assert door.said == [step for name in names for step in (("reading", name), ("read", name, False))] + [
        ("choose", "A (lease.md), B (notice.txt) and C (annex.md)", first.doc.budget.pages)]
    assert first.documents.labels == ("A", "B", "C") and [d.name for d in first.documents.documents] == names
    assert first.doc.strategy is Strategy.WHOLE and first.doc.text == first.documents.text()

    said = "".join([piece async for piece in ask(first.doc, "When?", llm, PARAMS, door, fresh=True)])
    assert ("asking", True, False) in door.said  # a first question, not a revisit
    prompt = llm.calls[-1].text
    assert prompt.index('label="A" name="lease.md"') < prompt.index('label="B" name="notice.txt"') \
        < prompt.index('label="C" name="annex.md"') < prompt.index("Question: When?")
    lines = [c.line for c in first.documents.cited(said)]
    assert [line.split(" · ")[:3] for line in lines] == [["A", "lease.md", "§ 1"], ["B", "notice.txt", "§ 1"]]

    again = Recording()
    second = await opened(tmp_path, llm, again)  # all three on the shelf: none read again
    assert [step for step in again.said if step[0] != "choose"] == [("read", name, True) for name in names]
    assert second.doc == first.doc
