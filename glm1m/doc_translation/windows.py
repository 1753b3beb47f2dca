"""Which part of the document each section is translated with: the whole document when it fits
the served context beside a section and its answer, else windows of neighbouring sections.

The windows are fixed runs of consecutive sections, not a window centred on each section: every
section of a window sends the same document part, so the prefix cache serves it as it serves a
whole document (a sliding window would make each request's prefix new).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glm1m.doc_translation.prompt import document_part
from glm1m.doc_translation.sections import Section
from glm1m.documents.limits import pieces
from glm1m.llm import Llm

OVERHEAD_TOKENS = 512  # the system message, the glossary's lines and the chat template


@dataclass(frozen=True)
class Windows:
    groups: tuple[tuple[int, ...], ...]  # section indices, each run in document order
    tokens: int  # the whole document part's tokens, by the server's /tokenize
    context: int
    limited: bool = False  # cut by the user's context_tokens, not by the served context

    def of(self, index: int) -> int:
        return next(n for n, group in enumerate(self.groups) if index in group)


async def plan_windows(sections: Sequence[Section], llm: Llm, answer_tokens: int, limit: int = 0) -> Windows:
    """Count the document part with the server's tokenizer (in pieces, as budget.measure does)
    and cut it into windows that leave room for the longest section's request and answer, and
    hold at most `limit` tokens each when it is not 0."""
    context = await llm.max_model_len()
    texts = [section.source + "\n\n" for section in sections]
    tokens = 0
    for piece, _ in pieces(texts):
        tokens += await llm.count_text_tokens(piece)
    chars = sum(len(text) for text in texts) or 1
    per_char = tokens / chars
    longest = max(len(section.text) for section in sections) * per_char
    served = context - OVERHEAD_TOKENS - answer_tokens - longest
    room = min(served, limit) if limit > 0 else served
    whole = await llm.count_text_tokens(document_part(sections)) if tokens <= room else tokens
    if whole <= room:
        return Windows((tuple(s.index for s in sections),), whole, context)
    # Section sizes estimated from the measured tokens per character: one /tokenize per section
    # would cost a round trip each on a document of thousands; a window that still does not fit
    # fails its sections with the context's sentence, never silently.
    groups: list[tuple[int, ...]] = []
    group: list[int] = []
    used = 0.0
    for section, text in zip(sections, texts, strict=True):
        size = len(text) * per_char
        if group and used + size > max(room, 0):
            groups.append(tuple(group))
            group, used = [], 0.0
        group.append(section.index)
        used += size
    groups.append(tuple(group))
    return Windows(tuple(groups), tokens, context, limited=0 < limit and tokens <= served)
