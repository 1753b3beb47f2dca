"""An open document kept on disk with its chat, so a reopened chat (after a restart too) still
sends its follow-up questions to the document instead of silently turning into a plain chat."""

from __future__ import annotations

import json
from pathlib import Path

from glm1m.documents.answer import OpenDocument
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.mapreduce import MapReduce
from glm1m.documents.pages import DocumentText, Page
from glm1m.errors import DocumentError
from glm1m.files import write_whole

FORMAT = 1


def save(doc: OpenDocument, path: Path) -> None:
    """Write `doc` whole or not at all (a crash keeps the previous one)."""
    body = {"format": FORMAT, "name": doc.text.name, "page_count": doc.text.page_count,
            "pages": [[p.number, p.text] for p in doc.text.pages],
            "budget": vars(doc.budget), "strategy": doc.strategy.value, "plan": vars(doc.plan)}
    write_whole(path, json.dumps(body, ensure_ascii=False).encode("utf-8"))


def load(path: Path) -> OpenDocument | None:
    """The document saved at `path`; None when there is none. Raises DocumentError (with what to
    do) for a file that cannot be read back."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        raise unreadable(path) from error
    try:
        if body["format"] != FORMAT:
            raise ValueError(f"format {body['format']}")
        text = DocumentText(str(body["name"]), tuple(Page(int(n), str(t)) for n, t in body["pages"]),
                            int(body["page_count"]))
        return OpenDocument(text, Budget(**body["budget"]), Strategy(body["strategy"]),
                            MapReduce(**body["plan"]))
    except (KeyError, TypeError, ValueError) as error:
        raise unreadable(path) from error


def unreadable(path: Path) -> DocumentError:
    return DocumentError(f"The document this chat was about could not be reopened ({path.name} is "
                         f"damaged). Attach the file again to ask about it.")
