"""Every text glm1m sends the model, as its builders make it for fixed inputs, byte for byte.

A prompt's text must not move by accident: token-id prompts are kept on users' shelves by a digest
of their text (documents/prompt_ids.py), and vLLM's prefix cache serves a follow-up only while its
prefix is the same bytes. `tests/support/prompt_texts.json` holds each text as it is; a deliberate
rewording rewrites it with `GLM1M_PROMPTS=write .venv/bin/pytest tests/unit/test_prompt_texts.py`
(and says so in its commit)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from glm1m.doc_translation.prompt import DocumentPrompt, document_part
from glm1m.doc_translation.sections import Section
from glm1m.documents.answer import SET_SUMMARY_REQUEST, SUMMARY_REQUEST, document_prompt
from glm1m.documents.lookup import TOOLS, prompt as lookup_prompt
from glm1m.documents.mapreduce import Note, combine_prompt, note_prompt
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import DocumentSet, set_prompt
from glm1m.documents.split import Chunk
from glm1m.grid.answers import asked as grid_asked
from glm1m.grid.questions import AnswerType, Question
from glm1m.settings import Settings
from glm1m.translation.fanout import Job

RECORD = Path(__file__).parent.parent / "support" / "prompt_texts.json"
PAGED = DocumentText("manual.pdf", (Page(1, "Install it."), Page(2, "安装指南：重启。")), 2)
SECTIONED = DocumentText("notes.md", (Page(1, "Release notes", Kind.SECTION, heading="Notes"),
                                      Page(2, "MIT since v2.", Kind.SECTION)), 2)
SET = DocumentSet((PAGED, SECTIONED)).text()
GLOSSARY = (("tenant", "租户"), ("GLM", "GLM"))


def texts() -> dict[str, object]:
    """Every prompt text, by a name that says which builder made it for which input."""
    found: dict[str, object] = {}
    for name, text in (("paged", PAGED), ("sectioned", SECTIONED), ("set", SET)):
        found[f"whole/{name}"] = document_prompt(text, "What is due?").messages
        found[f"lookup/{name}"] = lookup_prompt(text, "What is due?").messages
    for kind in (Kind.PAGE, Kind.SECTION, Kind.SET):
        found[f"whole_frame/{kind.value}"] = document_prompt(DocumentText("x", (), 0), "Q?", kind).messages
        chunk = Chunk("[p. 3]\nsome text", 3, 4, kind)
        found[f"note/{kind.value}"] = note_prompt("doc.pdf", chunk, "What is due?")
        notes = [Note(1, 2, kind, "first notes"), Note(3, 3, kind, "second notes")]
        for final in (True, False):
            found[f"combine/{kind.value}/{final}"] = combine_prompt("doc.pdf", notes, "Q?", final, kind)
        for answer_type in (None, *AnswerType):
            question = Question("What is the rent?", "rent", answer_type)
            found[f"grid/{kind.value}/{answer_type}"] = grid_asked(question, kind)
    found["set_prompt/empty"] = set_prompt(DocumentText("x", (), 0), "Q?").messages
    found["summary"] = [SUMMARY_REQUEST, SET_SUMMARY_REQUEST]
    found["lookup/tools"] = TOOLS
    sections = [Section(0, "# Title", "Title"), Section(1, "Body <b>x</b> ⟦1⟧", "Body x")]
    part = document_part(sections)
    found["doc_translation/document_part"] = part
    for source in (None, "German"):
        for glossary in ((), GLOSSARY):
            prompt = DocumentPrompt("Simplified Chinese", source, part, glossary)
            key = f"doc_translation/{source}/{bool(glossary)}"
            found[f"{key}/section"] = prompt.messages("Body <b>x</b> ⟦1⟧")
            found[f"{key}/glossary"] = prompt.glossary_messages()
            table = Job("Simplified Chinese", source, glossary)
            found[f"table/{source}/{bool(glossary)}"] = table.system_prompt()
    found["chat/default_system"] = Settings.model_fields["system_prompt"].default
    return found


def test_every_prompt_text_is_as_it_was() -> None:
    now = json.loads(json.dumps(texts(), ensure_ascii=False))
    if os.environ.get("GLM1M_PROMPTS") == "write":
        RECORD.write_text(json.dumps(now, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    kept = json.loads(RECORD.read_text(encoding="utf-8"))
    assert sorted(now) == sorted(kept)
    for name, text in now.items():
        assert text == kept[name], name
