"""While a document is read part by part, the page's waiting line keeps the parts' count: the
5-second heartbeat used to replace "reading: 3 of 9 parts" with the clock alone."""

from __future__ import annotations

from chainlit_app.document_flow import waiting_line
from glm1m.documents.answer import MapReduce, OpenDocument
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.pages import DocumentText, Page
from glm1m.progress import Progress


def test_the_heartbeat_keeps_the_count_of_parts_read() -> None:
    text = DocumentText("nettle.pdf", (Page(1, "x"),), 1)
    doc = OpenDocument(text, Budget(111, 218_319, 800_000, 32_768, 128_000), Strategy.MAP_REDUCE,
                       MapReduce(32_000, 8, 512))
    line = waiting_line(doc, 15, Progress("reading", 3, 9, unit="parts"))
    assert line.startswith("Reading nettle.pdf part by part: reading: 3 of 9 parts") and line.endswith("15 s")
    assert waiting_line(doc, 2) == "Reading nettle.pdf part by part … 2 s"  # before the first part
