"""Which OCR'd lines read as text, and when a page's OCR is a picture's marks (issue 23: an
engraving came out as noise words). The lines below are what Tesseract 5.3 (chi_sim+eng) gave."""

from __future__ import annotations

import pytest

from glm1m.documents.ocr import picture_dropped, wordlike

TEXT = ["Installation guide", "安装指南 : 先运行安装程序，然后重启电脑。", "The quick brown fox jumps over",
        "the lazy dog.", "第二页Second page", "配置文件configuration file", "12", "3.2 ± 0.1 %", "(2024)",
        "| 12 | 3.4 | — |"]
# From a hatched drawing, read with chi_sim+eng (some of its lines pass as text, such as
# "一=~ 四ome OS 、 _ & -一 —_— -一 1": the page as a whole is what tells a picture).
MARKS = ["-一 SS TN ~一一一", "_ —— = -", "-一一亏 ™. ~", "_ 一一~ 一一-O 一一一一一一一",
         "=~ -G- ~~ © :", "、一一一 © = Oo Cd ~ 一一一~", "一 CD) 一", "一"]


@pytest.mark.parametrize("line", TEXT)
def test_lines_of_text_read_as_text(line: str) -> None:
    assert wordlike(line)


@pytest.mark.parametrize("line", MARKS)
def test_lines_of_strokes_do_not(line: str) -> None:
    assert not wordlike(line)


def test_a_page_of_mostly_marks_is_a_picture_and_a_page_of_text_keeps_even_its_marks() -> None:
    assert picture_dropped("\n".join(MARKS + TEXT[:2])) == ""
    page = "\n".join(TEXT + MARKS[:2])
    assert picture_dropped(page) == page
    assert picture_dropped("") == ""
