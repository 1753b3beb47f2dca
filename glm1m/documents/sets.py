"""Several documents asked together: a set, in the order they were attached, each with a letter the
model is told (A, B, C, …) and cites back: "[B p. 12]", "[C § 3]".

The set's text is one DocumentText (`text()`), each document in a block of its own, in order:

    <document label="A" name="contract.pdf">
    [A p. 1]
    …
    </document>

    <document label="B" name="notes.md">
    [B § 1]
    …

so the whole read and map-reduce (answer.py, mapreduce.py) read a set as they read one document,
every part knowing its documents by its markers. Nothing in front of a block depends on what comes
after it (the system prompt names no document), so a document attached later leaves the earlier
ones as the prompt's unchanged prefix and vLLM's prefix cache serves them. A set of one is that
document as it always was: its own name, markers "[p. N]", the one-document prompt byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from glm1m.catalog import render, said
from glm1m.documents.pages import DocumentText, Kind, Page, index_of, letter
from glm1m.documents.prompt import Prompt, asked, members
from glm1m.prompts import SET_BLOCK_END, SET_SYSTEM, set_block_head


@dataclass(frozen=True)
class Cited:
    """A location an answer about a set cites, with the document it is in."""
    label: str  # the document's letter: "B"
    name: str  # its file name: "contract.pdf"
    page: Page  # the location, as its document has it (no letter: as read alone)

    @property
    def line(self) -> str:
        """What a door shows beside the answer: "B · contract.pdf · p. 12"."""
        return f"{self.label} · {self.name} · {self.page.location}"


@dataclass(frozen=True)
class DocumentSet:
    """Documents asked together, in the order attached; a document's letter is its place here."""
    documents: tuple[DocumentText, ...]

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(letter(i) for i in range(len(self.documents)))

    @property
    def name(self) -> str:
        """"contract.pdf"; "A (contract.pdf), B (notes.md) and C (report.docx)"."""
        if len(self.documents) == 1:
            return self.documents[0].name
        named = [f"{label} ({doc.name})" for label, doc in zip(self.labels, self.documents, strict=True)]
        return f"{', '.join(named[:-1])} and {named[-1]}"

    def said(self, lang: str) -> str:
        """`name` in `lang`, as the doors say it: "A (contract.pdf) and B (notes.md)",
        "A（contract.pdf）和 B（notes.md）"; one document's own name; "" for none."""
        if len(self.documents) <= 1:
            return self.documents[0].name if self.documents else ""
        named = [said("set_member", label=label, name=doc.name)
                 for label, doc in zip(self.labels, self.documents, strict=True)]
        return render(lang, "set_names", first=named[:-1], last=named[-1])

    def label_of(self, text: DocumentText) -> str | None:
        """The letter of the document here whose text (its locations) `text` has, whatever its
        name; None when none has."""
        return next((label for label, doc in zip(self.labels, self.documents, strict=True)
                     if doc.pages == text.pages), None)

    def with_document(self, text: DocumentText) -> DocumentSet:
        """This set and one more document after the others: the earlier keep their letters."""
        return DocumentSet((*self.documents, text))

    def without(self, label: str) -> DocumentSet:
        """This set without its document `label`: those after it move up a letter (the prompt's
        prefix then ends before it)."""
        return DocumentSet(tuple(d for i, d in enumerate(self.documents) if letter(i) != label))

    def text(self) -> DocumentText:
        """What the model reads: one document as it is; several, each in its labelled block."""
        if len(self.documents) == 1:
            return self.documents[0]
        pages = tuple(page for label, doc in zip(self.labels, self.documents, strict=True)
                      for page in labelled(label, doc))
        return DocumentText(self.name, pages, len(pages), names=tuple(doc.name for doc in self.documents))

    def cited(self, answer: str) -> list[Cited]:
        """The locations an answer cites, each with its document, in order of first citation."""
        if len(self.documents) == 1:
            alone = self.documents[0]
            return [Cited("A", alone.name, page) for page in alone.cited(answer)]
        own = {(label, page.number): page for label, doc in zip(self.labels, self.documents, strict=True)
               for page in doc.pages}  # each location as its document has it, without a letter
        return [Cited(page.doc, self.documents[index_of(page.doc)].name, own[page.doc, page.number])
                for page in self.text().cited(answer)]


def labelled(label: str, doc: DocumentText) -> list[Page]:
    """The document's locations with its letter, its block's header on the first and end on the
    last. A document without locations still gets its block, so its letter is not skipped."""
    pages = list(doc.pages) or [Page(1, "", doc.kind)]
    pages[0] = replace(pages[0], head=set_block_head(label, doc.name))
    pages[-1] = replace(pages[-1], tail=SET_BLOCK_END)
    return [replace(page, doc=label) for page in pages]


def set_prompt(text: DocumentText, question: str) -> Prompt:
    """The blocks first, question last: a follow-up, or a set with a document more, shares the
    prefix byte for byte. `text`: a set's text (DocumentSet.text), or one without locations to
    measure the frame."""
    blocks = text.marked_text()
    return Prompt(SET_SYSTEM, f"{blocks}\n\n" if blocks else "", asked(question),
                  members(text) if text.pages else ())


def is_set(text: DocumentText, kind: Kind | None = None) -> bool:
    return (kind or text.kind) is Kind.SET
