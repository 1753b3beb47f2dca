"""Every word glm1m sends the model, in one place: system prompts, the frames around a document and
a question, the instructions of map-reduce, looking things up, the grid, and of translating a
document or a table. The builders (documents/answer.py, sets.py, lookup.py, mapreduce.py,
grid/answers.py, doc_translation/prompt.py, translation/fanout.py) put these texts together into
their parts (documents/prompt.py's `Prompt`); none writes words of its own.

A text here must not change by accident: token-id prompts are kept on users' shelves by a digest
of their text (documents/prompt_ids.py), and vLLM's prefix cache serves a follow-up only while its
prefix is the same bytes; tests/unit/test_prompt_texts.py holds each builder's text for fixed
inputs. The model reads English here whatever the reader's language (the catalog's sentences are
for people); each prompt asks it to answer in the question's language.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import quoteattr

from glm1m.documents.pages import Kind

# --- Questions about documents ------------------------------------------------------------------

QUESTION = "Question: "  # the frame every document prompt's question goes in, last


def cite_how(kind: Kind) -> str:
    """How the prompts tell the model to cite a location of this kind."""
    if kind is Kind.SET:
        return "[A p. N] or [A § N], with the letter of its document as in the markers"
    return "[p. N]" if kind is Kind.PAGE else "[§ N]"


def document_system(kind: Kind = Kind.PAGE) -> str:
    """The system prompt of one document, whole or part by part; the same for every question about
    one document (the prefix cache): it names no document."""
    return ("You answer questions about the document the user gives you, in the language of the "
            f"question. Every statement must cite the {kind.value} it comes from as {cite_how(kind)}, "
            f"using the {kind.value} markers in the document. If the document does not say, answer "
            "that it does not.")


def whole_document(name: str, marked_text: str) -> str:
    """A whole document's part of the user message: the document first, so that the question, last,
    is all a follow-up changes."""
    return f"<document name=\"{name}\">\n{marked_text}\n</document>\n\n"


# The same for every set (the prefix cache): it says how documents are labelled, and each block's
# header says which letter is which file.
SET_SYSTEM = ("You answer questions about the documents the user gives you, in the language of the "
              "question. Each document comes in a block of its own, labelled with a capital letter "
              "(A, B, C, … in the order given) and its file name, and the marker before each of its "
              "pages or sections carries that letter: [B p. 12] is page 12 of document B, [C § 3] "
              "section 3 of document C. Every statement must cite the location it comes from exactly "
              "as its marker is written, letter included ([A p. N] or [A § N]). If the documents do "
              "not say, answer that they do not.")


def set_block_head(label: str, name: str) -> str:
    """The header of one document's block in a set's text (before its first location)."""
    return f"<document label=\"{label}\" name={quoteattr(name)}>\n"


SET_BLOCK_END = "\n</document>"  # after a set's document's last location

# What a door asks when the person sends documents without a question.
SUMMARY_REQUEST = ("Summarise the whole document: its purpose, its main points in order, and "
                   "anything a reader must not miss.")
SET_SUMMARY_REQUEST = ("Summarise each document in turn: its purpose, its main points in order, and "
                       "anything a reader must not miss; then say where they agree or differ.")

# --- Map-reduce (documents/mapreduce.py) --------------------------------------------------------


def note_ask(name: str, pages: str, text: str, kind: Kind, question: str) -> str:
    """One part's request: the part between tags, then the notes asked of it."""
    return (f"This is one part ({pages}) of the document {name}.\n"
            f"<part>\n{text}\n</part>\n\nWrite short notes, with {kind.value} "
            f"citations, of what this part says about: {question}")


def notes_block(pages: str, text: str) -> str:
    """One part's notes as the combining prompt holds them (and counts them)."""
    return f"Notes on {pages}:\n{text}"


def combine_ask(name: str, combined: str, question: str, final: bool, kind: Kind) -> str:
    """The combining request: the notes, then the answer (`final`) or shorter notes asked of them."""
    how = cite_how(kind)
    ask = (f"From these notes, answer: {question}\nKeep the {kind.value} citations {how}." if final else
           f"Combine these notes into shorter notes about: {question}\nKeep every {kind.value} "
           f"citation {how}.")
    return (f"Notes taken part by part from the document {name}, with "
            f"{kind.value} citations:\n\n{combined}\n\n{ask}")


# --- Looking things up (documents/lookup.py) ----------------------------------------------------

FIND, READ = "find_passages", "read_location"
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": FIND,
        "description": "Find the locations of the documents whose text holds the given words (any "
                       "language); returns a short passage around the words from each, with its marker.",
        "parameters": {"type": "object", "required": ["words"], "properties": {
            "words": {"type": "string", "maxLength": 200,
                      "description": "one or more words or phrases, separated by spaces"}}}}},
    {"type": "function", "function": {
        "name": READ,
        "description": "Read one location whole, by its marker: 'p. 12' or '§ 3', with the "
                       "document's letter when there are several: 'B p. 12'.",
        "parameters": {"type": "object", "required": ["location"], "properties": {
            "location": {"type": "string", "maxLength": 40}}}}},
]
LOOKUP_SYSTEM = ("You answer questions about documents you cannot see whole. Look up what you need "
                 f"with the tools: {FIND} finds the locations whose text holds some words, {READ} reads "
                 "one location whole by its marker. Look up before you answer, then answer in the "
                 "language of the question. Every statement must cite the location it comes from "
                 "exactly as its marker is written ([p. N] or [§ N]; with the document's letter when "
                 "there are several: [B p. N]). If what you read does not say, answer that the "
                 "documents do not say.")


def lookup_contents(listing: str) -> str:
    """The look-up prompt's document part: the contents (lookup.listed, in English), not the text."""
    return f"Documents:\n{listing}\n\n"


def cut_note(result: str, chars: int) -> str:
    """A lookup's result cut at `chars`, saying so, so the model knows there is more."""
    return f"{result[:chars]}\n[… cut at {chars:,} characters]"


# --- The grid (grid/answers.py) -----------------------------------------------------------------

SHAPE = {  # what the prompt says the value is (the model reads it; the schema holds it to it)
    "text": "a short text",
    "number": "a number (digits only, no unit)",
    "date": "a date as YYYY-MM-DD",
    "yes/no": "\"yes\" or \"no\"",
    "list": "a list of short texts",
}
# A prose cell's way out: without it a question the document does not answer got a guess.
NOT_ANSWERED = ("If the document does not answer it, say plainly that the document does not say, "
                "and nothing else.")


def grid_prose(question: str) -> str:
    return f"{question}\n{NOT_ANSWERED}"


def grid_typed(question: str, shape: str, kind: Kind) -> str:
    """A typed question: the JSON it wants (null: the document does not answer it), citations as
    the document's markers are written."""
    return (f"{question}\nReply with JSON only: {{\"answer\": {shape}, or null "
            f"if the document does not answer it, \"citations\": the locations it rests on, each as "
            f"{cite_how(kind)}}}.")


# --- Translating a document (doc_translation/prompt.py) or a table (translation/fanout.py) -------

GLOSSARY_ASK = (
    "Before translating, list the terms and names of this document that must be translated the "
    "same way everywhere (technical terms, product and program names, proper names), at most 40, "
    "each with its translation into {target}. Keep a name as it is where it is not translated. "
    "Reply with JSON only: {{\"terms\": [{{\"term\": \"...\", \"translation\": \"...\"}}]}}."
)
GLOSSARY_HEAD = "Always translate these terms exactly as given:"


def glossary_lines(glossary: Sequence[tuple[str, str]]) -> list[str]:
    return [f"- {term} → {translation}" for term, translation in glossary]


def document_translator(target: str, source: str | None) -> str:
    """A document's system message: the same for every section (the prefix cache)."""
    source_words = f" from {source}" if source else ""
    return (
        f"You are a professional translator. The user sends a document, then one section of it. "
        f"Translate only that section{source_words} into {target}, in keeping with the "
        f"whole document. Reply with the translation only: no notes, no quotes, no document "
        f"tags. Keep numbers, line breaks, Markdown markers, every HTML tag with its attributes "
        f"exactly as written, and every placeholder like ⟦1⟧ exactly once.")


def with_glossary(document: str, glossary: Sequence[tuple[str, str]]) -> str:
    """The document part with the glossary after it, when there is one."""
    if not glossary:
        return document
    terms = "\n".join(glossary_lines(glossary))
    return f"{document}\n\n{GLOSSARY_HEAD}\n{terms}"


def translated_document(body: str) -> str:
    """The sections' own text between tags: the document as the model reads it around a section."""
    return f"<document>\n{body}\n</document>"


def table_translator(target: str, source: str | None, glossary: Sequence[tuple[str, str]]) -> str:
    """A table's system message: identical for every row, so vLLM's prefix cache serves it after
    the first request."""
    source_words = f" from {source}" if source else ""
    lines = [
        f"You are a professional translator. Translate the user's text{source_words} into "
        f"{target}. Reply with the translation only: no notes, no quotes. Keep "
        f"numbers, names, line breaks and formatting."
    ]
    if glossary:
        lines.append(GLOSSARY_HEAD)
        lines += glossary_lines(glossary)
    return "\n".join(lines)

