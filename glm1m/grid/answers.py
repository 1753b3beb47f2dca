"""Typed answers: the JSON schema a typed question is asked with (vLLM's structured outputs), and
the answer read back into a cell's text, or the reason it cannot be.

A typed question's answer is {"answer": <value of its type>, "citations": ["[p. 12]", …]}; the
cell is the value and its citations as the model wrote them ("42 [p. 12]"). The value may be null:
the document does not answer it. Without that way out the schema made the model give a value of
the type anyway (a number for a document without one), so such a cell is the catalog's "not in
the document" (Read.absent), neither an answer nor a marked one. vLLM 0.32 takes the
schema as `structured_outputs: {"json": …}` in the request's body, on /v1/chat/completions and
/v1/completions alike (its `guided_json` is gone); a document read part by part (map-reduce,
look-up) is asked in prose with the same instruction, since the schema would hold every part's
note to it, and its answer is read as JSON where it is, else from the prose.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from glm1m.catalog import Said, said
from glm1m.documents.pages import Kind
from glm1m.grid.questions import AnswerType, Question
from glm1m.prompts import SHAPE, grid_prose, grid_typed

VALUE_SCHEMA: dict[AnswerType, dict[str, Any]] = {
    AnswerType.TEXT: {"type": "string"},
    AnswerType.NUMBER: {"type": "number"},
    AnswerType.DATE: {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    AnswerType.YES_NO: {"type": "string", "enum": ["yes", "no"]},
    AnswerType.LIST: {"type": "array", "items": {"type": "string"}},
}
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")


def schema(kind: AnswerType) -> dict[str, Any]:
    """The JSON schema of a typed answer: its value (null: the document does not answer it) and
    the citations it rests on."""
    return {"type": "object",
            "properties": {"answer": {"anyOf": [VALUE_SCHEMA[kind], {"type": "null"}]},
                           "citations": {"type": "array", "items": {"type": "string"}}},
            "required": ["answer", "citations"], "additionalProperties": False}


def structured(kind: AnswerType) -> dict[str, Any]:
    """The request body's extra fields that hold the answer to the schema (ChatParams.extra)."""
    return {"structured_outputs": {"json": schema(kind)}}


def asked(question: Question, kind: Kind) -> str:
    """The question as sent: a typed one says the JSON it wants, with the document's citations."""
    if question.type is None:
        return grid_prose(question.text)
    return grid_typed(question.text, SHAPE[question.type], kind)


@dataclass(frozen=True)
class Read:
    """An answer read for its cell: the text to show, and why it is marked (None: it is not)."""
    text: str
    problem: Said | None = None
    absent: bool = False  # the model said the document does not answer it (a null value)


def read_answer(question: Question, reply: str) -> Read:
    """The cell's text of `reply`: prose as it came; a typed answer as its value and citations."""
    reply = reply.strip()
    if question.type is None:
        return Read(reply) if reply else Read(reply, said("grid_problem_empty"))
    try:
        data = json.loads(reply)
    except ValueError:
        if reply.startswith("{"):  # JSON begun and cut short (the answer's length), or broken
            return Read(reply, said("grid_problem_not_json", type=question.type.value))
        return from_prose(question.type, reply)
    if not isinstance(data, dict) or "answer" not in data:
        return Read(reply, said("grid_problem_not_json", type=question.type.value))
    if data["answer"] is None:
        return Read("", absent=True)
    value = shown(question.type, data["answer"])
    citations = data.get("citations") or []
    if not isinstance(citations, list) or not all(isinstance(c, str) for c in citations):
        return Read(reply, said("grid_problem_not_json", type=question.type.value))
    if value is None:
        return Read(reply, said("grid_problem_type", type=question.type.value))
    return Read(" ".join([value, *(c.strip() for c in citations if c.strip())]))


def shown(kind: AnswerType, value: Any) -> str | None:
    """`value` as the cell shows it, None when it is not of `kind`."""
    if kind is AnswerType.NUMBER:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if kind is AnswerType.DATE:
        try:
            return date.fromisoformat(value).isoformat() if isinstance(value, str) else None
        except ValueError:
            return None
    if kind is AnswerType.YES_NO:
        return value.lower() if isinstance(value, str) and value.lower() in ("yes", "no") else None
    if kind is AnswerType.LIST:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return None
        return "; ".join(item.strip() for item in value)
    return value.strip() if isinstance(value, str) and value.strip() else None


def from_prose(kind: AnswerType, reply: str) -> Read:
    """A typed answer that came as prose (read part by part, or cut short): its value where the
    prose holds exactly one of the type, else marked. The prose is kept as the model wrote it."""
    problem = said("grid_problem_type", type=kind.value)
    if kind is AnswerType.NUMBER:
        found = NUMBER.findall(re.sub(r"\[[^\]\n]*\]", "", reply))  # not a citation's numbers
        return Read(reply) if len(found) == 1 else Read(reply, problem)
    if kind is AnswerType.DATE:
        dates = {d for d in ISO_DATE.findall(reply) if shown(kind, d)}
        return Read(reply) if len(dates) == 1 else Read(reply, problem)
    if kind is AnswerType.YES_NO:
        first = re.match(r"\W*(yes|no)\b", reply, re.I)
        return Read(reply) if first else Read(reply, problem)
    return Read(reply) if reply else Read(reply, said("grid_problem_empty"))
