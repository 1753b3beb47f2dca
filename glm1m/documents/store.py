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
from glm1m.documents.pages import text_body, text_of
from glm1m.documents.sets import DocumentSet
from glm1m.errors import DocumentError
from glm1m.files import write_whole

SET_FORMAT = 3  # a chat's documents: {"documents": [a text_body each, in attach order], ...}


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


def unreadable(path: Path) -> DocumentError:
    return DocumentError(key="doc_reopen_damaged", file=path.name)
