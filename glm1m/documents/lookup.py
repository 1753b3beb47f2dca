"""Looking things up: the third way to read, beside whole and map-reduce (issue 28). The model is
told which documents there are and how many locations each has, not their text, and finds what it
needs with two tools the app carries out on the text it holds: find the passages that hold some
words, read a location whole by its marker. Its answer cites what it read ([p. 12], [B § 3]).

For a set past the model's effective context (RULER puts GLM-4-9B-Chat-1M's at 64K; it reads a
million tokens, but not equally well) or past the served one, when a question needs a few places
and not the whole. Bounded: at most `calls` lookups per answer, each result cut at `chars`; the
last turn may not look up (tool_choice "none"). The first turn must: the model has read nothing
yet, so an answer then would be a guess. It is held to one call in GLM-4's own call format (the
function's name on a line, then its JSON arguments: server/tool_parser_glm4.py, which turns it into
`tool_calls`) by vLLM's structured outputs. Not tool_choice "required": vLLM's JSON path for it
lets the arguments run on (on the CPU demo server, random weights filled 256 tokens and no call
came back), while this pattern bounds every argument. Every prompt here is one-shot (nothing
kept in the KV tier).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from glm1m.catalog import EN, Said, render, said
from glm1m.chat import close_now
from glm1m.documents.pages import LOCATION_PATTERN, DocumentText, Page, asked_location
from glm1m.documents.prompt import Prompt, asked, members
from glm1m.llm import ChatParams, Llm, Piece
from glm1m.progress import unit_said
from glm1m.prompts import FIND, LOOKUP_SYSTEM, READ, TOOLS, cut_note, lookup_contents
from glm1m.tool_calls import ToolCall

CALL_TOKENS = 256  # the first turn's call is at most ~100 tokens (first_call)
PASSAGE_CHARS = 320  # around the words found, per location


@dataclass(frozen=True)
class Limits:
    calls: int  # lookups per answer
    chars: int  # characters of one lookup's result
    passages: int = 5  # locations one find returns


@dataclass(frozen=True)
class Lookup:
    """One lookup, as a door shows it: the tool, what was asked, what it gave back."""
    tool: str  # FIND or READ
    asked: str  # the words, or the location
    result: str  # what the model reads back
    found: tuple[str, ...]  # the markers of the locations it returned: "p. 3", "B § 2"
    # Where nothing was read: the sentence that says why, which `result` is in English (the
    # model's language here, as LOOKUP_SYSTEM's), for a door to show in its reader's language.
    note: Said | None = None

    def words(self, lang: str) -> str:
        """What both doors show: "Find: licence → found B § 2, A p. 2"; "阅读：p. 9 → 未找到"."""
        asked = (render(lang, "lookup_find", words=self.asked) if self.tool == FIND
                 else render(lang, "lookup_read", location=self.asked))
        found = (render(lang, "lookup_found", places=list(self.found)) if self.found
                 else render(lang, "lookup_none"))
        return f"{asked} → {found}"

    def shown(self, lang: str) -> str:
        """What a door shows opened: the documents' text as read, or the note in `lang`."""
        return self.note.render(lang) if self.note is not None else self.result


def noted(tool: str, asked: str, note: Said) -> Lookup:
    """A lookup that read nothing: the model gets the note in English, a door in its language."""
    return Lookup(tool, asked, note.render(EN), (), note)


OnLookup = Callable[[Lookup], Awaitable[None]]


async def nothing(lookup: Lookup) -> None:
    return None


@dataclass(frozen=True)
class Lines(Said):
    """Sentences one to a line, itself a sentence (a field of another) in either language."""

    def render(self, lang: str) -> str:
        return "\n".join(line.render(lang) for line in self.fields["lines"])


def listed(text: DocumentText) -> Said:
    """What the model is told instead of the text (in English), each document, its locations and
    their span, in either language: "- A a.md: 3 sections (A § 1–3)"; "- A a.md：3 节（A § 1–3）"."""
    lines = []
    for member in members(text):
        pages = member.pages
        first, last = pages[0], pages[-1]
        mark = f"{member.label} " if member.label else ""
        lines.append(said("lookup_member", mark=mark, name=member.name, count=len(pages),
                          unit=unit_said(first.kind.unit, len(pages)),
                          span=first.kind.span(first.number, last.number)))
    return Lines("lookup_lines", {"lines": lines})


def prompt(text: DocumentText, question: str) -> Prompt:
    """The contents first (not the text: the model looks it up), the question last."""
    return Prompt(LOOKUP_SYSTEM, lookup_contents(listed(text).render(EN)), asked(question), members(text))


def plain(page: Page) -> Page:
    """The location without its set's block header and end: what a lookup returns."""
    return replace(page, head="", tail="")


def find(text: DocumentText, words: str, limits: Limits) -> Lookup:
    """The locations holding most of `words` (case folded), best first, a passage from each. Chinese
    has no spaces between words: a phrase no location holds is looked for by its pairs of characters."""
    terms = [w for w in dict.fromkeys(words.casefold().split()) if w]
    best = ranked(text, terms, limits.passages) or ranked(text, pairs(terms), limits.passages)
    if not best:
        return noted(FIND, words, said("lookup_no_words", words=words))
    passages, found = [], []
    for _, _, index, held in best:
        page = text.pages[index]
        # In the text as it is: casefold changes lengths ("ß" -> "ss"), so its offsets drift.
        at = re.search(re.escape(held[0]), page.text, re.IGNORECASE)
        start = max(0, (at.start() if at else 0) - PASSAGE_CHARS // 2)
        snippet = " ".join(page.text[start:start + PASSAGE_CHARS].split())
        passages.append(f"[{page.label}] …{snippet}…")
        found.append(page.label)
    return Lookup(FIND, words, cut("\n\n".join(passages), limits.chars), tuple(found))


def ranked(text: DocumentText, terms: list[str], most: int) -> list[tuple[int, int, int, list[str]]]:
    scored = []
    for index, page in enumerate(text.pages):
        folded = page.text.casefold()
        held = [t for t in terms if t in folded]
        if held:
            scored.append((-len(held), -sum(folded.count(t) for t in held), index, held))
    return sorted(scored)[:most]


CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{3,}")


def pairs(terms: list[str]) -> list[str]:
    """"许可证条款" -> 许可, 可证, 证条, 条款: what a Chinese phrase's words are made of."""
    return list(dict.fromkeys(run[i:i + 2] for term in terms for run in CJK.findall(term)
                              for i in range(len(run) - 1)))


def read(text: DocumentText, location: str, limits: Limits) -> Lookup:
    """One location whole (cut at limits.chars), by its marker; a sentence when there is none."""
    named = asked_location(location)
    labels = [member.label for member in members(text)]
    if named is None:
        return noted(READ, location, said("lookup_not_location", location=location, example=example(text)))
    label, number = named
    if not label and len(labels) > 1:
        return noted(READ, location, said("lookup_which", labels=", ".join(labels), example=example(text)))
    label = label if len(labels) > 1 else labels[0]
    page = next((p for p in text.pages if p.doc == label and p.number == number), None)
    if page is None:
        return noted(READ, location, said("lookup_no_location", location=location, contents=listed(text)))
    return Lookup(READ, location, cut(plain(page).marked(), limits.chars), (page.label,))


def example(text: DocumentText) -> str:
    first = text.pages[0] if text.pages else Page(1, "")
    return first.label


def cut(result: str, chars: int) -> str:
    return result if len(result) <= chars else cut_note(result, chars)


def carry_out(text: DocumentText, call: ToolCall, limits: Limits) -> Lookup:
    """Do what the call asks; arguments that are not what the tool takes get a sentence back, for
    the model to try again (never an error for the person)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        arguments = None
    if call.name == FIND and isinstance(arguments, dict) and isinstance(arguments.get("words"), str):
        return find(text, arguments["words"], limits)
    if call.name == READ and isinstance(arguments, dict) and isinstance(arguments.get("location"), str):
        return read(text, arguments["location"], limits)
    return noted(call.name, call.arguments,
                 said("lookup_bad_call", find=FIND, read=READ, example=example(text)))


def first_call(text: DocumentText) -> str:
    """The first turn's pattern: one call of either tool, in GLM-4's format, every argument bounded
    (a location names one of these documents' letters, or none for a lone one). A regex as vLLM's
    structured outputs (xgrammar) take it: `\\n` written out, as xgrammar refuses a newline in a
    character class; no control character in the words (JSON refuses a raw tab: the parser would
    give the call back as text)."""
    labels = "|".join(member.label for member in members(text) if member.label)
    letter = f"(({labels}) )?" if labels else ""
    return (FIND + r'\n\{"words": "[^"\\\x00-\x1f]{1,80}"\}|' +
            READ + r'\n\{"location": "' + letter + LOCATION_PATTERN + r'"\}')


def first_turn(text: DocumentText, params: ChatParams) -> ChatParams:
    held = {**(params.extra or {}), "structured_outputs": {"regex": first_call(text)}}
    # The call is no answer: the answer's length (16 tokens in a test) does not bound it.
    return replace(params, max_tokens=CALL_TOKENS, extra=held)


@dataclass
class Turn:
    """One of the model's turns as it streams: the words it writes, the calls it makes. GLM-4 may
    write words and then a call in one answer (a text turn, `<|assistant|>`, a call turn)."""
    said: list[str] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)
    shown: bool = False  # words of it went out to the reader

    def text(self, piece: str, after: bool) -> str:
        """`piece` as the reader gets it. `after`: words of an earlier turn went out, so this turn's
        begin a paragraph of their own instead of running on from them (its leading whitespace,
        GLM-4's empty first line, dropped). The words stay visible rather than held back until
        the turn ends: they say what the model is about to do, and holding them would delay every
        answer's first byte to its turn's end."""
        self.said.append(piece)
        if after and not self.shown:
            piece = piece.lstrip()
            piece = f"\n\n{piece}" if piece else ""
        self.shown = self.shown or bool(piece.strip())
        return piece

    @property
    def words(self) -> str | None:
        """The words as they go back to the model before its calls: stripped, as the parser's
        whole-answer parse gives them (the chat template writes GLM-4's empty first line itself)."""
        return "".join(self.said).strip() or None


async def look_up(text: DocumentText, question: str, llm: Llm, params: ChatParams, limits: Limits,
                  on_lookup: OnLookup = nothing) -> AsyncIterator[Piece]:
    """Stream the answer the model gives after looking up what it needs in `text`, telling
    `on_lookup` each lookup once carried out. Words the model writes before a lookup stream too;
    the answer after it starts a paragraph of its own. Closing this closes the model's stream."""
    messages: list[dict[str, Any]] = list(prompt(text, question).messages)
    one_shot = replace(params, one_shot=True)
    done = 0
    written = False  # words went out in an earlier turn
    while True:
        choice = "none" if done >= limits.calls else "auto"
        turn = Turn()
        pieces = llm.stream_turn(messages, one_shot if done else first_turn(text, one_shot), TOOLS, choice)
        try:
            async for piece in pieces:
                if isinstance(piece, ToolCall):
                    turn.calls.append(piece)
                elif isinstance(piece, str):
                    if shown := turn.text(piece, written):
                        yield shown
                elif done:  # the held first call's cut is no answer's
                    yield piece
        finally:
            await close_now(pieces)
        written = written or turn.shown
        calls = turn.calls[:limits.calls - done]
        if not calls:
            return
        messages.append({"role": "assistant", "content": turn.words,
                         "tool_calls": [call.message() for call in calls]})
        for call in calls:
            done += 1
            lookup = carry_out(text, call, limits)
            await on_lookup(lookup)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": lookup.result})
