"""The page says which pages of a damaged file could not be read, as `glm1m extract` does
(pages.lost_note), in English and Chinese with the page numbers as they are."""

from __future__ import annotations

import pytest

from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.documents.pages import DocumentText, Page, lost_note


def text(lost: tuple[int, ...] = (), pages_found: bool = False) -> DocumentText:
    pages = tuple(Page(n, "" if n in lost else f"page {n}") for n in range(1, 13))
    return DocumentText("report.pdf", pages, 12, lost, pages_found)


@pytest.mark.parametrize("damaged", [text((3,)), text((6, 7, 8, 9, 10, 12)), text(pages_found=True),
                                     text((2,), pages_found=True)])
def test_the_page_says_in_english_what_extract_says(damaged: DocumentText) -> None:
    assert lost_note(damaged, EN) == lost_note(damaged) is not None


def test_a_whole_file_says_nothing() -> None:
    assert lost_note(text(), EN) is None and lost_note(text(), ZH) is None


def test_in_chinese_the_page_numbers_stay() -> None:
    said = lost_note(text((6, 7, 8, 9, 10, 12), pages_found=True), ZH)
    assert said == ("report.pdf 已损坏：它的页面列表丢失了，因此各页是逐一找回的，顺序可能与印刷顺序不同。"
                    "report.pdf 的第 6–10, 12 页无法读取（文件在这些地方损坏或被截断）：文本中缺少这些页。"
                    "如需完整文本，请重新下载或导出该文件。")
