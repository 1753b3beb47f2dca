"""A document's sections go to the server as token ids (doc_translation/job.py, prompt_ids.py's
appended_ids): the document part is tokenized once for the whole job, each section through a small
frame, so vLLM neither templates nor tokenizes the whole document again for every section. The
real client against a stand-in for vLLM's routes (tests/support/fake_vllm.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from glm1m.doc_translation.glossary import glossary_path
from glm1m.doc_translation.job import DocJob, run_document
from glm1m.doc_translation.prompt import DocumentPrompt
from glm1m.llm import LlmClient
from glm1m.settings import Settings
from tests.support.fake_vllm import FakeVllm, render

pytestmark = pytest.mark.timeout(20)
PARAGRAPHS = [f"Paragraph {n} says the valve opens at {n * 7} bar." for n in range(1, 7)]
REPLY = "Das Ventil öffnet."


def translated(tmp_path: Path, fake: FakeVllm) -> Path:
    src = tmp_path / "manual.txt"
    src.write_text("\n\n".join(PARAGRAPHS) + "\n", encoding="utf-8")
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=0, api_key="k", data_dir=tmp_path)
    llm = LlmClient(settings, transport=fake.transport())
    out = tmp_path / "manual.de.txt"
    glossary_path(out).write_text("", encoding="utf-8")  # the stand-in streams only: no glossary pass
    summary = asyncio.run(run_document(src, DocJob("German", concurrency=3), llm, out))
    assert summary.complete and summary.total == len(PARAGRAPHS)
    return out


def test_each_section_goes_as_ids_and_the_document_is_tokenized_once(tmp_path: Path) -> None:
    fake = FakeVllm(reply=REPLY)
    out = translated(tmp_path, fake)
    assert out.read_text(encoding="utf-8").count(REPLY) == len(PARAGRAPHS)
    sent = fake.bodies("/v1/completions")
    assert len(sent) == len(PARAGRAPHS)
    assert fake.bodies("/v1/chat/completions") == []
    whole = [b for b in fake.bodies("/tokenize") if PARAGRAPHS[0] in str(b.get("messages"))
             and PARAGRAPHS[-1] in str(b.get("messages"))]
    assert len(whole) == 1  # tokenized once for all six sections (the count of windows.py is text)
    # Each prompt is exactly the ids the chat template makes of the same request, section last.
    prompt = DocumentPrompt("German", None, "")
    system = prompt.system()
    asked = {"".join(map(chr, body["prompt"])) for body in sent}
    for paragraph in PARAGRAPHS:
        ending = f"<|user|>\n{paragraph}<|assistant|>"
        matching = [text for text in asked if text.endswith(ending)]
        assert len(matching) == 1
        assert matching[0].startswith(render([{"role": "system", "content": system}], False))
        assert all(p in matching[0] for p in PARAGRAPHS)


def test_a_server_that_gives_no_ids_gets_every_section_as_chat(tmp_path: Path) -> None:
    fake = FakeVllm(reply=REPLY, gives_ids=False)
    out = translated(tmp_path, fake)
    assert out.read_text(encoding="utf-8").count(REPLY) == len(PARAGRAPHS)
    assert fake.bodies("/v1/completions") == []
    assert len(fake.bodies("/v1/chat/completions")) == len(PARAGRAPHS)
