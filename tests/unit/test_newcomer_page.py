"""Issue 26's sentences without a server: a message whose file never reached the session (attached
before "New Chat") or that holds nothing is refused; the job line says a CSV's layout in Chinese."""

from __future__ import annotations

from pathlib import Path

from glm1m.chainlit_app.file_only import FILES_LOST, name_files, refusal, typed_text
from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.chainlit_app.translation_flow import layout_words
from glm1m.translation.table import open_source


def test_a_message_whose_file_never_arrived_or_with_nothing_in_it_is_refused() -> None:
    stale = {"message": {"output": "", "metadata": {}}, "fileReferences": [{"id": "from-the-old-chat"}]}
    name_files({}, stale)
    step = stale["message"]
    assert step["metadata"][FILES_LOST] == 1 and step["output"].startswith("Attached: a file from before")
    text = typed_text(step["output"], step["metadata"])
    assert text == ""
    assert "attached before “New Chat”" in (refusal(EN, text, step["metadata"], 0) or "")
    assert "新建对话" in (refusal(ZH, "summarise it", step["metadata"], 0) or "")  # words do not save it
    assert "no text and no file" in (refusal(EN, " ", {}, 0) or "")
    assert refusal(EN, "", {}, 1) is None and refusal(EN, "hello", {}, 0) is None


def test_the_job_line_says_the_delimiter_and_the_title_rows_in_both_languages(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("Quarterly terms\nid;text\n1;one\n2;two\n", encoding="utf-8")
    source = open_source(path)
    assert "semicolon-separated" in layout_words(EN, source)
    assert layout_words(ZH, source) == "；分号分隔；表头在第 2 行，其上 1 行（标题、注释）原样保留、不翻译"
    path.write_text("id,text\n1,one\n", encoding="utf-8")
    assert layout_words(ZH, open_source(path)) == layout_words(EN, open_source(path)) == ""
