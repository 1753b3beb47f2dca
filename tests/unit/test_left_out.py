"""Files a message carries but glm1m cannot use in it are named, never silently ignored."""

from __future__ import annotations

from chainlit_app.uploads import sort_uploads as sort


def test_files_a_message_cannot_use_are_named_not_ignored() -> None:
    class F:
        def __init__(self, name: str) -> None:
            self.name, self.path, self.mime = name, f"/tmp/{name}", None

    both = sort([F("rows.csv"), F("report.pdf"), F("more.csv")])
    assert both.left_out() == ("One file per message: glm1m is working on rows.csv; more.csv, "
                               "report.pdf were not read. Attach each in a message of its own.")
    assert sort([F("a.pdf"), F("b.pdf")]).left_out().endswith("b.pdf was not read. Attach it in a "
                                                              "message of its own.")
    assert sort([F("rows.csv"), F("glossary.csv")]).left_out() is None  # the glossary is used
    assert sort([F("a.pdf")]).left_out() is None
