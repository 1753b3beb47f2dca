"""A document prompt as its parts, and the one place the question is put in its frame
(glm1m/prompts.py's QUESTION, "Question: …"; the words of every prompt are there).

A builder (answer.whole_prompt's `document_prompt`, sets.set_prompt, lookup.prompt) returns a
`Prompt`: the system message, the document part (everything of the user message before the
question), the question part, and the members (each document's letter, name and locations). What
comes after (token ids in prompt_ids.py, looking things up in lookup.py) takes these values: none
finds them again in the rendered text, so a prompt's wording can change without turning its token
ids or its members off.
"""

from __future__ import annotations

from dataclasses import dataclass

from glm1m.documents.pages import DocumentText, Page, index_of
from glm1m.llm import Message
from glm1m.prompts import QUESTION


def asked(question: str) -> str:
    """The question part of a document prompt: the question in its frame."""
    return f"{QUESTION}{question}"


@dataclass(frozen=True)
class Member:
    """One document of a prompt: its letter ("" for a lone document), its name, its locations."""
    label: str
    name: str
    pages: tuple[Page, ...]


def members(text: DocumentText) -> tuple[Member, ...]:
    """Each document in `text`, in order: a lone one without a letter; a set's by the letters its
    locations carry, named by the set (DocumentText.names, filled by sets.DocumentSet.text)."""
    if not text.pages or not text.pages[0].doc:
        return (Member("", text.name, text.pages or (Page(1, ""),)),)
    found: dict[str, list[Page]] = {}
    for page in text.pages:
        found.setdefault(page.doc, []).append(page)
    return tuple(Member(label, name_of(text, label), tuple(pages)) for label, pages in found.items())


def name_of(text: DocumentText, label: str) -> str:
    """The name of a set's document `label`; its letter when the text does not know it."""
    index = index_of(label)
    return text.names[index] if 0 <= index < len(text.names) else label


@dataclass(frozen=True)
class Prompt:
    """A document prompt as its builder made it: [system, user], the user message being the
    document part followed by the question part."""
    system: str
    document_part: str  # "" when the prompt measures the frame alone (no document in it)
    question_part: str
    members: tuple[Member, ...] = ()

    @property
    def messages(self) -> list[Message]:
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.document_part + self.question_part}]

    @property
    def last_line(self) -> str:
        """The document part's last line, whatever it says ("</document>\\n\\n"): what its tokens
        end with, so the question's tokens can be asked in the same place (prompt_ids.py)."""
        part = self.document_part
        return part[part.rstrip("\n").rfind("\n") + 1:]
