"""Questions about a whole document, answered with page (or section) citations. No UI imports.

Whole document (default while it fits under a threshold): the document goes in front of the model
at once, with page markers, and the question goes last — so every follow-up shares the same prompt
prefix byte for byte and vLLM's prefix cache serves it. Map-reduce (default past the threshold, the
only way past the served context): mapreduce.py. Several documents asked together are read the same
way, as their set's text (sets.py): `open_set`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

from glm1m import affinity
from glm1m.chat import MIN_ANSWER_TOKENS, close_now
from glm1m.documents.budget import Budget, Strategy, measure
from glm1m.documents.lookup import Limits, OnLookup, look_up, nothing
from glm1m.documents.mapreduce import MapReduce, ask_map_reduce
from glm1m.documents.pages import DocumentText, Kind
from glm1m.documents.prompt import Prompt, asked, members
from glm1m.documents.prompt_ids import KeptIds, prompt_ids
from glm1m.documents.sets import DocumentSet, is_set, set_prompt
from glm1m.errors import ContextTooLong, DocumentError
from glm1m.llm import ChatParams, Llm, Message, Piece
from glm1m.progress import OnProgress, ignore
from glm1m.prompts import SET_SUMMARY_REQUEST, SUMMARY_REQUEST, document_system, whole_document
from glm1m.settings import Settings

__all__ = ["SET_SUMMARY_REQUEST", "SUMMARY_REQUEST", "MapReduce", "OpenDocument", "answer",
           "document_prompt", "open_document", "open_set", "plan_of", "whole_prompt", "with_strategy"]


def plan_of(settings: Settings) -> MapReduce:
    return MapReduce(settings.map_chunk_tokens, settings.map_concurrency, settings.map_note_tokens)


@dataclass(frozen=True)
class OpenDocument:
    """A document a session asks about, as read and measured once: text, budget, strategy, plan."""
    text: DocumentText
    budget: Budget
    strategy: Strategy
    plan: MapReduce
    limits: Limits = Limits(calls=8, chars=6000)  # of looking things up (Strategy.LOOK_UP)
    # The token ids of its whole-document prompt's document part, once a question has needed them.
    ids: KeptIds = field(default_factory=KeptIds, compare=False, repr=False)

    @property
    def name(self) -> str:
        return self.text.name


async def open_document(text: DocumentText, llm: Llm, settings: Settings, answer_tokens: int,
                        strategy: Strategy | None = None, on_progress: OnProgress = ignore
                        ) -> OpenDocument:
    """Measure the text and fix how it is read: `strategy`, else the budget's default. Raises
    DocumentError when the strategy cannot read it with an answer of `answer_tokens`."""
    budget = await measure(text, llm, settings.whole_document_threshold, on_progress,
                           settings.document_max_tokens)
    return with_strategy(text, budget, strategy or budget.default(answer_tokens), answer_tokens, settings)


async def open_set(documents: DocumentSet, llm: Llm, settings: Settings, answer_tokens: int,
                   strategy: Strategy | None = None, on_progress: OnProgress = ignore) -> OpenDocument:
    """open_document for documents asked together: their set's text, measured as one (a set of
    one is that document)."""
    return await open_document(documents.text(), llm, settings, answer_tokens, strategy, on_progress)


def with_strategy(text: DocumentText, budget: Budget, strategy: Strategy, answer_tokens: int,
                  settings: Settings, ids: KeptIds | None = None) -> OpenDocument:
    """The document read with `strategy`. Raises DocumentError when that strategy cannot read it
    with an answer of `answer_tokens`. `ids`: where its prompt's ids are kept (the shelf's place
    for a document from the shelf); None: in memory only."""
    budget.check(strategy, answer_tokens)
    return OpenDocument(text, budget, strategy, plan_of(settings),
                        Limits(settings.lookup_calls, settings.lookup_chars), ids or KeptIds())


async def answer(doc: OpenDocument, question: str, llm: Llm, params: ChatParams,
                 on_progress: OnProgress = ignore, on_lookup: OnLookup = nothing) -> AsyncIterator[Piece]:
    """Stream a cited answer. Raises DocumentError when the document cannot be read this way
    with this question and answer length, with the sentence saying what to do. A whole-document
    answer is shortened to the room the document and the question leave, as a chat turn is."""
    try:
        if doc.strategy is Strategy.WHOLE:
            prompt = document_prompt(doc.text, question)
            ids = await prompt_ids(llm, prompt, doc.ids)  # None: as chat (prompt_ids.py)
            params = await fit_whole(doc, question, llm, replace(params, session=document_key(doc)),
                                     len(ids.ids) if ids else None)
            pieces = ids.stream(params) if ids else llm.stream_chat(prompt.messages, params)
        elif doc.strategy is Strategy.LOOK_UP:
            pieces = look_up(doc.text, question, llm, params, doc.limits, on_lookup)
        else:
            pieces = ask_map_reduce(doc.text, chars_per_token(doc.budget), doc.plan, question, llm,
                                    params, on_progress)
        try:
            async for piece in pieces:
                yield piece
        finally:
            await close_now(pieces)  # stopped here: the HTTP stream ends now, not at GC
    except ContextTooLong as error:  # the chat's sentence would say "start a new chat"
        raise DocumentError(key="doc_prompt_too_long", name=doc.name) from error


async def fit_whole(doc: OpenDocument, question: str, llm: Llm, params: ChatParams,
                    prompt_tokens: int | None = None) -> ChatParams:
    """The answer length that fits beside the whole document and this question, counted exactly
    (the document once when it was read, the prompt around it now; `prompt_tokens`: the whole
    prompt's, when its ids are known)."""
    if prompt_tokens is None:
        prompt_tokens = doc.budget.tokens + await llm.count_chat_tokens(
            whole_prompt(DocumentText(doc.name, (), 0), question, doc.text.kind))
    room = doc.budget.max_model_len - prompt_tokens
    if room < MIN_ANSWER_TOKENS:
        raise DocumentError(key="doc_no_room_for_answer", name=doc.name, tokens=doc.budget.tokens,
                            max=doc.budget.max_model_len)
    return replace(params, max_tokens=min(params.max_tokens, room))


def document_key(doc: OpenDocument) -> str:
    """The router key of every whole-document question on `doc`: its prompt's opening without the
    question. The opening of each question's own prompt would hold the question when the document
    is shorter than AFFINITY_CHARS, and such a document's questions went to different servers
    behind a router, each reading it again; for a longer one the two keys are the same."""
    return affinity.key_of_messages(whole_prompt(doc.text, ""))


def chars_per_token(budget: Budget) -> float:
    """Measured on this document by the server; a first guess for chunk sizes, checked later."""
    return max(budget.chars / max(budget.tokens, 1), 0.5)


def whole_prompt(text: DocumentText, question: str, kind: Kind | None = None) -> list[Message]:
    """document_prompt's messages, as a chat request sends them."""
    return document_prompt(text, question, kind).messages


def document_prompt(text: DocumentText, question: str, kind: Kind | None = None) -> Prompt:
    """Document first, question last: follow-ups share the prefix byte for byte. `kind`: the
    document's (when `text` holds none of it, to measure the frame). A set's: sets.set_prompt."""
    if is_set(text, kind):
        return set_prompt(text, question)
    return Prompt(document_system(kind or text.kind), whole_document(text.name, text.marked_text()),
                  asked(question), members(text) if text.pages else ())
