"""Map-reduce chunks and the pages they cover; page markers and the citations read back."""

from __future__ import annotations

import re

import pytest

from glm1m.documents.pages import MAX_RANGE_PAGES, DocumentText, Page, cited_pages, page_marks
from glm1m.documents.split import MIN_CHUNK_CHARS, Chunk, page_at, resplit, split


def document(pages: list[str], name: str = "doc.pdf") -> DocumentText:
    return DocumentText(name, tuple(Page(n, text) for n, text in enumerate(pages, start=1)), len(pages))


def english(page: int, sentences: int = 12) -> str:
    return " ".join(f"Sentence {j} of page {page}." for j in range(sentences))


def offsets(text: str, chunks: list[Chunk]) -> list[int]:
    """Where each chunk sits in the marked text, searched in order."""
    found, at = [], 0
    for chunk in chunks:
        at = text.index(chunk.text, at)
        found.append(at)
        at += len(chunk.text)
    return found


def test_marked_text_puts_a_marker_before_every_page_and_keeps_empty_pages() -> None:
    doc = document(["first", "", "third"])
    text = doc.marked_text()
    assert text == "[p. 1]\nfirst\n\n[p. 2]\n\n\n[p. 3]\nthird"
    assert [number for _, number in page_marks(doc)] == [1, 2, 3]
    assert [text[offset:offset + 6] for offset, _ in page_marks(doc)] == ["[p. 1]", "[p. 2]", "[p. 3]"]


def test_page_at_is_the_last_marker_at_or_before_the_offset() -> None:
    marks = [(0, 1), (10, 2), (20, 5)]
    assert [page_at(marks, o) for o in (0, 9, 10, 19, 20, 999)] == [1, 1, 2, 2, 5, 5]
    assert page_at([], 42) == 1


def test_chunks_cover_the_text_in_order_losing_only_whitespace() -> None:
    doc = document([english(p) for p in range(1, 8)])
    text = doc.marked_text()
    chunks = split(doc, 250)
    assert len(chunks) > 7  # pages longer than a chunk are cut inside
    assert all(len(c.text) <= 250 for c in chunks)
    # The splitter strips each chunk, so the concatenation is not the text byte for byte; what
    # holds is that chunks appear in order, without overlap, with only whitespace between them.
    starts = offsets(text, chunks)
    ends = [start + len(c.text) for start, c in zip(starts, chunks, strict=True)]
    assert starts[0] == 0 and ends[-1] == len(text)
    assert all(text[end:start].strip() == "" for end, start in zip(ends, starts[1:], strict=False))
    assert re.sub(r"\s", "", "".join(c.text for c in chunks)) == re.sub(r"\s", "", text)


def test_each_chunk_knows_the_pages_it_covers() -> None:
    doc = document([english(p, sentences=3 * p) for p in range(1, 7)])
    text = doc.marked_text()
    marks = page_marks(doc)
    chunks = split(doc, 300)
    for chunk, start in zip(chunks, offsets(text, chunks), strict=True):
        inside = [n for offset, n in marks if start <= offset < start + len(chunk.text)]
        assert chunk.first_page == page_at(marks, start)
        assert chunk.last_page == (inside[-1] if inside else chunk.first_page)
        # The chunk's own words agree: its first sentence is on first_page, its last on last_page.
        said = [int(n) for n in re.findall(r"of page (\d+)\.", chunk.text)]
        assert (said[0], said[-1]) == (chunk.first_page, chunk.last_page)
    assert [c.first_page for c in chunks] == sorted(c.first_page for c in chunks)
    assert chunks[0].first_page == 1 and chunks[-1].last_page == 6


def test_a_chunk_over_several_pages_says_so() -> None:
    chunks = split(document(["short one.", "short two.", "short three."]), 10_000)
    assert [(c.first_page, c.last_page, c.pages) for c in chunks] == [(1, 3, "pp. 1–3")]
    assert Chunk("x", 4, 4).pages == "p. 4"


def test_chunks_are_never_smaller_than_the_floor() -> None:
    chunks = split(document([english(1, 40)]), 10)
    assert all(len(c.text) <= MIN_CHUNK_CHARS for c in chunks)
    assert max(len(c.text) for c in chunks) > MIN_CHUNK_CHARS // 2  # not cut at 10 characters


def test_chinese_text_is_cut_at_sentence_ends() -> None:
    sentences = ["这是第一句合同条款的内容说明。", "付款期限为三十天吗？", "违约方应当承担全部责任！",
                 "本合同自签字之日起生效。"]
    body = "".join(sentences * 12)
    chunks = split(document([body]), 200)
    assert len(chunks) > 2
    assert all(len(c.text) <= 200 for c in chunks)
    assert all(c.text[-1] in "。！？" for c in chunks)  # no sentence is cut in two


@pytest.mark.parametrize(("answer", "pages"), [
    ("As stated [p. 3].", [3]),
    ("Tight [p.3] and loose [p.  4].", [3, 4]),
    ("A range [p. 5-6].", [5, 6]),
    ("An en dash [p. 5–6] and spaces [p. 8 - 9].", [5, 6, 8, 9]),
    ("Later first [p. 7], then [p. 2], again [p. 7].", [7, 2]),
    ("Out of the document [p. 11], [p. 0], [p. 99-100].", []),
    ("A range past the end [p. 9-12].", [9, 10]),
    ("From page zero [p. 0-2].", [1, 2]),
    ("No citation, p. 3, (p. 4), [page 5].", []),
])
def test_cited_pages(answer: str, pages: list[int]) -> None:
    assert cited_pages(answer, page_count=10) == pages


def test_a_long_cited_range_is_capped() -> None:
    pages = cited_pages("Everything [p. 2-400].", page_count=500)
    assert pages[0] == 2 and pages == list(range(2, 2 + len(pages)))
    # A handful of pages, not 399. (MAX_RANGE_PAGES says 5; the range opens 6: first + 5, inclusive.)
    assert len(pages) <= MAX_RANGE_PAGES + 1


def test_markers_are_counted_where_they_were_written_never_searched_for() -> None:
    """A page whose own text quotes a marker ("[p. 9]" on a line of its own) stays one page: the
    offsets come from the pages, and a chunk cut again keeps them (Chunk.marks)."""
    doc = document([f"See the index:\n[p. 9]\nfor more. {english(1)}", english(2), english(3)])
    assert [n for _, n in page_marks(doc)] == [1, 2, 3]
    chunks = split(doc, 5_000)
    assert [(c.first_page, c.last_page) for c in chunks] == [(1, 3)]
    pieces = resplit(chunks[0], 300)
    assert {c.first_page for c in pieces} | {c.last_page for c in pieces} == {1, 2, 3}
    for piece in pieces:
        said = [int(n) for n in re.findall(r"of page (\d+)\.", piece.text)]
        assert not said or (said[0], said[-1]) == (piece.first_page, piece.last_page)
