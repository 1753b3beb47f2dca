"""The prompts of a document's translation, as parts: the system message, the document part (the
whole document, or the window of sections that holds the section), the glossary and the section
(their words are glm1m/prompts.py's).

Every request of a document begins with the same system message and the same document part, so
vLLM's prefix cache serves that part after its first request and each section costs only its own
tokens. The sections go as the server's token ids (documents/prompt_ids.py, `appended_ids`): the
document part is tokenized once, each section through a small frame, so vLLM neither templates
nor tokenizes the whole document again for every section (0.5-2.5 s a request on a 1M-token
document, docs/benchmarks.md); where ids cannot be had they go as chat, which the cache serves
the same way. The glossary pass asks with the same system message and document, so it is the
request that fills the cache for the sections after it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from glm1m.doc_translation.sections import Section
from glm1m.llm import Message
from glm1m.prompts import GLOSSARY_ASK, document_translator, translated_document, with_glossary

__all__ = ["GLOSSARY_ASK", "DocumentPrompt", "document_part", "structured_glossary"]


@dataclass(frozen=True)
class DocumentPrompt:
    """What every request about one document (or one window of it) shares, and the section last."""
    target_language: str
    source_language: str | None
    document: str  # the document part: the sections' text, in order, between <document> tags
    glossary: tuple[tuple[str, str], ...] = ()

    def system(self) -> str:
        return document_translator(self.target_language, self.source_language)

    def document_message(self) -> Message:
        return {"role": "user", "content": with_glossary(self.document, self.glossary)}

    def shared(self) -> list[Message]:
        """What every section's request begins with: the system message and the document part."""
        return [{"role": "system", "content": self.system()}, self.document_message()]

    def messages(self, section_text: str) -> list[Message]:
        """The section's request: the shared prefix, then the section alone as the last message."""
        return [*self.shared(), {"role": "user", "content": section_text}]

    def glossary_messages(self) -> list[Message]:
        """The first pass: the same system message and document, then the request for terms."""
        document: Message = {"role": "user", "content": self.document}
        ask = GLOSSARY_ASK.format(target=self.target_language)
        return [{"role": "system", "content": self.system()}, document,
                {"role": "user", "content": ask}]


def document_part(sections: Sequence[Section]) -> str:
    """The sections' own text, in order: the document as the model reads it around a section."""
    return translated_document("\n\n".join(section.source for section in sections))


GLOSSARY_SCHEMA = {
    "type": "object",
    "properties": {"terms": {"type": "array", "maxItems": 40, "items": {
        "type": "object",
        "properties": {"term": {"type": "string"}, "translation": {"type": "string"}},
        "required": ["term", "translation"]}}},
    "required": ["terms"],
}


def structured_glossary() -> dict[str, object]:
    """The request's extra fields that hold the glossary's answer to its schema (vLLM's
    structured outputs, as grid/answers.py asks a typed answer)."""
    return {"structured_outputs": {"json": json.loads(json.dumps(GLOSSARY_SCHEMA))}}
