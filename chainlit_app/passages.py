"""The passages an answer cites, shown beside it: each a side element whose name is the citation
as the answer writes it ("p. 3", "§ 3"; of several documents, "B p. 3"), so Chainlit links the
two, and whose text says where a reader finds it (for several documents, which one: "B ·
contract.pdf · p. 3"). Shown as Markdown, so a document's images become links there too."""

from __future__ import annotations

from collections.abc import AsyncIterator

import chainlit as cl

from glm1m.chainlit_app.i18n import t
from glm1m.chainlit_app.render import without_images
from glm1m.chat import close_now
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import DocumentSet
from glm1m.llm import Piece, text_of

PASSAGE_CHARS = 1500
DEMO_CITED = 2  # locations the demo's answer cites for the model, which writes noise


def cited_passages(text: str, doc: DocumentText, documents: DocumentSet | None = None) -> list:
    """The locations `text` cites in `doc` (the text the model read), as side elements;
    `documents`: the set it was made of, when several."""
    return [cl.Text(name=name, content=content, display="side")
            for name, content in passages(text, doc, documents)]


def passages(text: str, doc: DocumentText, documents: DocumentSet | None = None) -> list[tuple[str, str]]:
    """cited_passages' names and texts."""
    if documents is None or len(documents.documents) == 1:
        return [(page.label, passage(page)) for page in doc.cited(text)]
    return [(f"{cited.label} {cited.page.label}",
             f"**{cited.line}**\n\n{without_images(cited.page.text[:PASSAGE_CHARS])}")
            for cited in documents.cited(text)]


def passage(page: Page) -> str:
    """A section opens with where a reader finds it ("§ 3 · Installation · ¶ 4–9")."""
    where = f"**{page.location}**\n\n" if page.kind is Kind.SECTION else ""
    return where + without_images(page.text[:PASSAGE_CHARS])


def demo_citations(text: DocumentText) -> str:
    """"[p. 1] [p. 2]", "[A p. 1] [A p. 2]": the first locations with text of what the model
    was sent, written as the answer would cite them."""
    return " ".join(f"[{page.label}]" for page in [p for p in text.pages if p.text.strip()][:DEMO_CITED])


async def demo_cited(pieces: AsyncIterator[Piece], text: DocumentText, lang: str) -> AsyncIterator[Piece]:
    """The demo model's answer and, when it has ended citing nothing (random weights write
    noise), a line marked as the app's that cites the first locations it was sent: a newcomer can
    open a cited passage before a real model is served. An answer that cites is left as it is."""
    written: list[Piece] = []
    try:
        async for piece in pieces:
            written.append(piece)
            yield piece
    finally:
        await close_now(pieces)
    if not text.cited(text_of(written)) and (citations := demo_citations(text)):
        yield t(lang, "demo_cites", citations=citations)
