"""Files a message carries but glm1m cannot use in it are named, never silently ignored; several
documents in one message are all read, together (none is left out)."""

from __future__ import annotations

from glm1m.catalog import EN
from glm1m.chainlit_app.uploads import sort_uploads as sort


def test_files_a_message_cannot_use_are_named_not_ignored() -> None:
    class F:
        def __init__(self, name: str) -> None:
            self.name, self.path, self.mime = name, f"/tmp/{name}", None

    both = sort([F("rows.csv"), F("report.pdf"), F("more.csv")])
    assert both.left_out().render(EN) == (
        "Only rows.csv is read: a table is translated on its own, so more.csv, report.pdf were not read. "
        "Attach each table in a message of its own, and documents (several may go together) in a message "
        "without a table.")
    assert sort([F("rows.csv"), F("more.xlsx")]).left_out().render(EN).startswith(
        "Only rows.csv is read: one table per message, so more.xlsx was not read.")
    documents = sort([F("a.pdf"), F("b.docx"), F("c.md")])
    assert documents.left_out() is None and [f.name for f in documents.documents] == ["a.pdf", "b.docx", "c.md"]
    assert sort([F("rows.csv"), F("glossary.csv")]).left_out() is None  # the glossary is used
    assert sort([F("a.pdf")]).left_out() is None
