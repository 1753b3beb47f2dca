"""The page's Translate command (issue 37, item 4) without a server: what its first lines say in
either language, and the core's notes said in the page's words (a glossary note names no path on
the server and no command-line flag: the page hands the CSV over instead)."""

from __future__ import annotations

from pathlib import Path

from glm1m.catalog import said
from glm1m.chainlit_app.document_translation_flow import COMMANDS, is_translate, job_head, note_words
from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.doc_translation.job import DocJob
from glm1m.progress import Progress, Stage


def test_the_command_is_named_as_the_composer_shows_it_in_each_language() -> None:
    assert is_translate(COMMANDS[EN]) and is_translate(COMMANDS[ZH])
    assert not is_translate(None) and not is_translate("Grid")


def test_the_head_names_the_target_and_where_a_resumed_job_continues() -> None:
    job = DocJob(target_language="English", lang=ZH)
    resumed = Progress(Stage.TRANSLATING, 2, 6, unit="sections", resumed=2)
    head = job_head(ZH, "报告.md", job, resumed, ["术语表：沿用此前为这份文档整理的术语表。"])
    assert head.startswith("把 **报告.md** 从模型识别出的语言逐段翻译成英文")
    assert "此前已完成 2 / 6 节，现在翻译其余 4 节" in head and "\n- 术语表：" in head
    head = job_head(EN, "r.md", DocJob(target_language="简体中文", source_language="English"))
    assert head.startswith("Translating **r.md** from English into Simplified Chinese (⚙ settings)")
    assert "Continuing" not in head and "with Translate again" in head


def test_glossary_notes_name_no_server_path_nor_flag_and_others_are_the_cores() -> None:
    written = said("doc_tr_glossary_written", count=3, path=Path("/srv/glm1m/x.glossary.csv"))
    reused = said("doc_tr_glossary_reused", path=Path("/srv/glm1m/x.glossary.csv"))
    for lang in (EN, ZH):
        for note in (written, reused):
            assert "/srv" not in note_words(lang, note) and "--glossary" not in note_words(lang, note)
    assert note_words(EN, written) == "Glossary: the model named 3 terms; the CSV comes with the translation."
    html = said("doc_tr_md_html", count=2)
    assert note_words(ZH, html) == html.render(ZH)
