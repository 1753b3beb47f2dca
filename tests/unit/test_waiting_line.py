"""While a document is read part by part, the page's waiting line keeps the parts' count: the
5-second heartbeat used to replace "reading: 3 of 9 parts" with the clock alone."""

from __future__ import annotations

import time

from glm1m.chainlit_app.document_flow import waiting_line
from glm1m.chainlit_app.i18n import ZH
from glm1m.documents.answer import MapReduce, OpenDocument
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.pages import DocumentText, Page
from glm1m.progress import Progress, Stage


def test_the_heartbeat_keeps_the_count_of_parts_read() -> None:
    text = DocumentText("nettle.pdf", (Page(1, "x"),), 1)
    doc = OpenDocument(text, Budget(111, 218_319, 800_000, 32_768, 128_000), Strategy.MAP_REDUCE,
                       MapReduce(32_000, 8, 512))
    line = waiting_line(doc, 15, Progress(Stage.READING, 3, 9, unit="parts"))
    assert line.startswith("Reading nettle.pdf part by part: reading: 3 of 9 parts") and line.endswith("15 s")
    # A Chinese line in Chinese punctuation throughout (it said "正在分段读取 a.pdf: 读取：0 / 2 段").
    zh = waiting_line(doc, 15, Progress(Stage.READING, 3, 9, unit="parts"), lang=ZH)
    assert zh == "正在分段读取 nettle.pdf（读取：3 / 9 段） … 15 秒"
    assert waiting_line(doc, 2) == "Reading nettle.pdf part by part … 2 s"  # before the first part


def test_a_whole_document_this_server_read_before_says_so_instead_of_the_full_prefill() -> None:
    text = DocumentText("A.txt", (Page(1, "x"),), 1)
    doc = OpenDocument(text, Budget(1, 1_000_000, 4_000_000, 1_048_576, 1_000_000), Strategy.WHOLE,
                       MapReduce(32_000, 8, 512))
    before = time.mktime((2026, 12, 1, 23, 40, 0, 0, 0, -1))
    line = waiting_line(doc, 5, again=True, before=before)
    assert line.startswith("Asking A.txt again … 5 s: this server read it before (at 2026-12-01 23:40), "
                           "so if it still holds its 1,000,000 tokens the answer starts in seconds; else ")
    assert "The model is reading all" not in line
    # A follow-up in the same chat: the same, with no time.
    assert waiting_line(doc, 5, again=True).startswith("Asking A.txt again … 5 s: this server read it "
                                                       "before, so if")
    zh = waiting_line(doc, 5, lang=ZH, again=True, before=before)
    assert zh.startswith("再次询问 A.txt … 5 秒：此服务器之前读过它（于 2026-12-01 23:40），如果仍保留着它的 "
                         "1,000,000 个词元，回答几秒内就会开始；否则")
    assert waiting_line(doc, 5).startswith("The model is reading all 1,000,000 tokens of A.txt")
