"""An open document kept on disk with its chat, so a reopened chat (after a restart too) still
sends its follow-up questions to the document instead of silently turning into a plain chat.

A chat's several documents (sets.py) are kept as their set: each document's locations in attach
order (format 3), from which the set's text is made again as it was, so the reopened chat's
prompt is the one before byte for byte (vLLM's prefix cache still serves it)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from glm1m.documents.answer import OpenDocument
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.lookup import Limits
from glm1m.documents.mapreduce import MapReduce
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import DocumentSet
from glm1m.errors import DocumentError
from glm1m.files import write_whole

# 2: each location is [number, text, kind, heading, span] (sections of reflowing formats);
# 1: [number, text], pages only — still read, so chats saved before reopen the same.
FORMAT = 2
READ_FORMATS = (1, 2)
SET_FORMAT = 3  # a chat's documents: {"documents": [a text_body each, in attach order], ...}


def text_body(text: DocumentText) -> dict:
    """A document's locations as saved (a chat's open document and the shelf keep this one form);
    `lost` and `pages_found` only when a damaged file had them."""
    body = {"format": FORMAT, "name": text.name, "page_count": text.page_count,
            "pages": [[p.number, p.text, p.kind.value, p.heading, p.span] for p in text.pages]}
    if text.lost:
        body["lost"] = list(text.lost)
    if text.pages_found:
        body["pages_found"] = True
    return body


def text_of(body: dict) -> DocumentText:
    """text_body's inverse. Raises KeyError, TypeError or ValueError for a body it did not write."""
    if body["format"] not in READ_FORMATS:
        raise ValueError(f"format {body['format']}")
    return DocumentText(str(body["name"]), tuple(location(entry) for entry in body["pages"]),
                        int(body["page_count"]), tuple(int(n) for n in body.get("lost", ())),
                        bool(body.get("pages_found", False)))


def save(doc: OpenDocument, path: Path, documents: DocumentSet | None = None) -> None:
    """Write `doc` whole or not at all (a crash keeps the previous one). `documents`: the set
    `doc` reads, when it holds several (a set of one is saved as its document)."""
    how = {"budget": vars(doc.budget), "strategy": doc.strategy.value, "plan": vars(doc.plan)}
    if documents is not None and len(documents.documents) > 1:
        body = {"format": SET_FORMAT, "documents": [text_body(d) for d in documents.documents], **how}
    else:
        body = {**text_body(doc.text), **how}
    write_whole(path, json.dumps(body, ensure_ascii=False).encode("utf-8"))


def forget(path: Path) -> None:
    """The chat keeps no document any more (all were taken out)."""
    path.unlink(missing_ok=True)


def load(path: Path) -> OpenDocument | None:
    """The document saved at `path` (a set's text, for a set); None when there is none. Raises
    DocumentError (with what to do) for a file that cannot be read back."""
    found = load_set(path)
    return found[1] if found is not None else None


def load_set(path: Path, limits: Limits | None = None) -> tuple[DocumentSet, OpenDocument] | None:
    """The documents saved at `path` (one saved alone is a set of one) and the open document that
    reads them; None when there is none. `limits`: of looking things up, as this server's settings
    say now (None: the defaults). Raises DocumentError as load does."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise unreadable(path) from error
    try:
        if body["format"] == SET_FORMAT:
            documents = DocumentSet(tuple(text_of(d) for d in body["documents"]))
        else:
            documents = DocumentSet((text_of(body),))
        opened = OpenDocument(documents.text(), Budget(**body["budget"]), Strategy(body["strategy"]),
                              MapReduce(**body["plan"]))
        return documents, opened if limits is None else replace(opened, limits=limits)
    except (KeyError, TypeError, ValueError) as error:
        raise unreadable(path) from error


def location(entry: list) -> Page:
    """A page or section as saved: [number, text] (format 1) or [number, text, kind, heading, span]."""
    if len(entry) == 2:
        return Page(int(entry[0]), str(entry[1]))
    number, text, kind, heading, span = entry
    return Page(int(number), str(text), Kind(kind), str(heading), str(span))


def unreadable(path: Path) -> DocumentError:
    return DocumentError(key="doc_reopen_damaged", file=path.name)
