"""A long text counted in pieces by the real demo server's /tokenize (issue 33, item 3): the pieces
add up to what the server counts for the whole, and counting stops once past the limit."""

from __future__ import annotations

import pytest

from glm1m.documents import limits
from glm1m.documents.budget import measure
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.errors import LimitReached
from glm1m.llm import Llm, LlmClient
from glm1m.settings import Settings
from tests.support.pdfs import words_page

pytestmark = pytest.mark.server


@pytest.fixture
async def llm(model_server) -> Llm:
    client = LlmClient(Settings(base_url=model_server.base_url, retries=0))
    yield client
    await client.aclose()


def paragraph(chars: int) -> DocumentText:
    """One section of one paragraph, as a text file without blank lines is read."""
    text, n = "", 1
    while len(text) < chars:
        text += words_page(n, 3000) + " "
        n += 1
    return DocumentText("long.txt", (Page(1, text[:chars].strip(), Kind.SECTION, "", "line 1"),), 1)


async def test_a_paragraph_longer_than_a_piece_counts_as_the_server_counts_it_whole(llm: Llm) -> None:
    doc = paragraph(2 * limits.PIECE_CHARS + 50_000)  # three pieces, cut before a space
    budget = await measure(doc, llm, threshold=6000)
    whole = await llm.count_text_tokens(doc.pages[0].marked() + "\n\n")
    assert budget.tokens == whole


async def test_counting_stops_once_past_the_limit(llm: Llm) -> None:
    doc = paragraph(5 * limits.PIECE_CHARS)
    first = await llm.count_text_tokens(next(limits.pieces([doc.pages[0].marked() + "\n\n"]))[0])
    with pytest.raises(LimitReached) as refused:
        await measure(doc, llm, threshold=6000, max_tokens=first + 1)
    assert refused.value.fields["tokens"] > first + 1
    assert refused.value.fields["share"] == pytest.approx(0.4, abs=0.01)  # two pieces of five
    assert "GLM1M_DOCUMENT_MAX_TOKENS" in str(refused.value)
