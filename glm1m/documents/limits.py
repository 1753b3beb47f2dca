"""The limits a shared server needs on one upload's reading work, each checked before the work it
bounds, each a setting whose name the refusal says (issue 33, item 3):

- a zipped document (DOCX, EPUB, XPS) by its zip directory, before anything is unpacked;
- a reflowing document (DOCX, EPUB, HTML, FB2, MOBI) by MuPDF's page count once it is laid out,
  before its text is read;
- OCR, by the pages that would need it, before any is read;
- counting, in pieces of bounded size, stopped once a document is past what glm1m reads;
- a user's reading, by the documents of theirs being read at once.

Each refusal is a LimitReached (a DocumentError: the doors say it as they say any document's).
"""

from __future__ import annotations

import threading
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from glm1m.errors import LimitReached
from glm1m.settings import Settings
from glm1m.sizes import MB

# Below this, a zip is not refused for packing tightly: MuPDF opens 13 MB of DOCX XML in about
# 6 s (measured, MuPDF 1.28.5), so what a small archive unpacks to costs seconds at most.
RATIO_FROM_MB = 20
# A reflowing document is laid out on pages 20 A4 pages tall (reflow.LAYOUT_HEIGHT); its page
# count times this is about its length in A4 pages (a 50,000-paragraph DOCX: 152 tall pages,
# 3,261 laid out on A4).
A4_PER_LAID_OUT_PAGE = 20
# /tokenize is asked about at most this many characters at once. A 60 MB text file (33.4M
# tokens) sent whole kept vLLM's API process at ~100 % CPU and ~13 GB for 5 minutes (issue 33);
# 64 sections of a DOCX or a text file (3,000 characters each, sections.PART_CHARS) are 192,000,
# so an ordinary document is asked about in as many calls as before.
PIECE_CHARS = 200_000


def setting(name: str) -> str:
    """The variable that sets `name`: "GLM1M_OCR_MAX_PAGES"."""
    if name not in Settings.model_fields:
        raise KeyError(name)
    return f"{Settings.model_config.get('env_prefix', '')}{name}".upper()


# --- unpacking ---
def check_unpacked(path: Path, name: str, kind: str, max_mb: float, max_ratio: float) -> None:
    """Refuse a zip that would unpack to more than `max_mb`, or (past RATIO_FROM_MB) to more than
    `max_ratio` times its packed size, by the sizes its central directory declares: nothing is
    inflated. MuPDF and zipfile read a member up to its declared size, so that bounds them. A
    file that is no zip passes (its reader says what it is)."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    unpacked = sum(member.file_size for member in members)
    packed = max(sum(member.compress_size for member in members), 1)
    if unpacked > max_mb * MB:
        raise LimitReached(key="doc_unpacks_too_large", name=name, mb=unpacked / MB, limit=max_mb,
                           kind=kind, setting=setting("document_max_unpacked_mb"))
    if unpacked > RATIO_FROM_MB * MB and unpacked > max_ratio * packed:
        raise LimitReached(key="limit_unpack_ratio", name=name, mb=unpacked / MB,
                           ratio=unpacked / packed, limit=max_ratio, kind=kind,
                           setting=setting("document_max_unpack_ratio"))


# --- pages ---
def check_laid_out(laid_out: int, name: str, kind: str, max_pages: int | None) -> None:
    """Refuse a reflowing document whose layout (`laid_out` pages of reflow's size) comes to
    more than `max_pages` A4 pages; None: no limit."""
    pages = laid_out * A4_PER_LAID_OUT_PAGE
    if max_pages is not None and pages > max_pages:
        raise LimitReached(key="limit_laid_out_pages", name=name, pages=pages, limit=max_pages,
                           kind=kind.upper(), setting=setting("reflow_max_pages"))


def check_ocr_pages(pages: int, name: str, max_pages: int) -> None:
    """Refuse, before any is read, a document with more pages to OCR than `max_pages`."""
    if pages > max_pages:
        raise LimitReached(key="limit_ocr_pages", name=name, pages=pages, limit=max_pages,
                           setting=setting("ocr_max_pages"))


# --- counting ---
def pieces(texts: Sequence[str], most_chars: int = PIECE_CHARS, most_texts: int = 64
           ) -> Iterator[tuple[str, int]]:
    """The texts, in order, in pieces of at most `most_chars` characters and `most_texts` texts,
    each with how many of the texts are done once it is counted. A text longer than `most_chars`
    is cut: after the last line end in the piece, else before its last space (where a tokenizer
    that splits words at spaces counts the two sides as it counts the whole), else at the limit."""
    joined: list[str] = []
    size = 0
    for done, text in enumerate(texts, start=1):
        if joined and (size + len(text) > most_chars or len(joined) == most_texts):
            yield "".join(joined), done - 1
            joined, size = [], 0
        start = 0  # cut by offsets: slicing off the rest each time copied a 60 MB text 300 times
        while len(text) - start > most_chars:
            end = cut_at(text, start, start + most_chars)
            yield text[start:end], done - 1
            start = end
        rest = text[start:] if start else text
        joined.append(rest)
        size += len(rest)
    if joined:
        yield "".join(joined), len(texts)


def cut_at(text: str, start: int, most: int) -> int:
    """Where to end a piece of `text` that begins at `start` and may run to `most` (< its end)."""
    half = (start + most) // 2
    line = text.rfind("\n", half, most)
    if line >= 0:
        return line + 1
    space = text.rfind(" ", half, most)
    return space if space > start else most


def check_tokens(tokens: int, name: str, max_tokens: int, counted_chars: int, chars: int) -> None:
    """Stop counting `name` once its count so far passes `max_tokens`."""
    if tokens > max_tokens:
        raise LimitReached(key="limit_tokens", name=name, limit=max_tokens, tokens=tokens,
                           share=counted_chars / max(chars, 1), setting=setting("document_max_tokens"))


# --- a user's reading at once ---
_reading: dict[str, int] = {}
_guard = threading.Lock()


@contextmanager
def reading_slot(owner: str, most: int, name: str) -> Iterator[None]:
    """One of `owner`'s `most` documents read at once (in this process: the app's users share
    it), held while the block runs; LimitReached when all are taken."""
    with _guard:
        now = _reading.get(owner, 0)
        if now >= most:
            raise LimitReached(key="limit_reads_per_user", name=name, reading=now,
                               setting=setting("reads_per_user"))
        _reading[owner] = now + 1
    try:
        yield
    finally:
        with _guard:
            left = _reading[owner] - 1
            if left:
                _reading[owner] = left
            else:
                del _reading[owner]
