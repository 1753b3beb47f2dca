"""The one catalog of sentences: every id has English and Chinese with the same fields; every id a
module names (an error's key=, t(), render(), said()) is there and gets exactly its fields; plurals
pick "1 page" / "2 pages"; the CLI speaks the locale's language."""

from __future__ import annotations

import ast
import re
import shutil
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace

import pytest

from glm1m.catalog import (CATALOG, EN, LANGUAGES, SHIPPED, ZH, Said, field_names, fields_of, forms_of,
                           language_of, read_catalog, render)
from glm1m.documents.pages import Kind
from glm1m.errors import DocumentError
from glm1m.progress import Progress, Stage
from glm1m.translation.source import TableSource
from tests.conftest import ROOT

CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # CJK words and punctuation
NAMING_CALLS = {"t": 1, "render": 1, "said": 0, "Said": 0}  # function -> the position of its id


def test_every_id_has_both_languages_with_the_same_fields() -> None:
    for key, english in CATALOG.items():
        forms = forms_of(key)
        assert all(forms), f"{key} lacks a language"
        if isinstance(english, tuple):
            assert len(english) == 2 and english[0] != english[1], f"{key}: (one, other)"
        # Every form takes the same fields; `count` (which picks the English form) may go unsaid.
        assert len({frozenset(fields_of(form) - {"count"}) for form in forms}) == 1, key
        chinese = SHIPPED.entries[ZH][key]
        assert isinstance(chinese, str), key  # Chinese has one form
        if re.search(r"[A-Za-z]{2}", re.sub(r"\{[^{}]*\}", "", forms[0])):  # words, not ", " or fields
            assert CHINESE.search(chinese), f"{key} is not Chinese"


def test_each_shipped_language_has_every_id_in_the_same_domain() -> None:
    """A shipped language is whole (a partial one falls back to English, but none ships so) and
    keeps each id in the domain English keeps it in, so an id is found at the same place in every
    language; an id is in one domain only."""
    assert LANGUAGES == (EN, ZH)
    english = SHIPPED.domains[EN]
    assert sum(len(domain) for domain in english.values()) == len(CATALOG)  # no id in two of them
    for lang in LANGUAGES:
        domains = SHIPPED.domains[lang]
        assert sorted(domains) == sorted(english), lang
        for name, domain in english.items():
            assert sorted(domains[name]) == sorted(domain), (lang, name)
            for key, form in domains[name].items():  # one sentence, or (one, other)
                assert isinstance(form, str) or len(form) == 2, (lang, name, key)


def test_a_partial_language_says_what_it_lacks_in_english(tmp_path: Path) -> None:
    """Adding a language is adding its folder; a file that gives only some ids works already, the
    others said in English, entry by entry."""
    shutil.copytree(Path(str(files("glm1m.catalog").joinpath(EN))), tmp_path / EN)
    (tmp_path / "fr").mkdir()
    (tmp_path / "fr" / "documents.toml").write_text(
        'pages = ["{count:,} page", "{count:,} pages"]\n'
        'doc_stopped = "Lecture de **{name}** arrêtée après {seconds}."\n', encoding="utf-8")
    catalog = read_catalog(tmp_path)
    assert catalog.languages == (EN, "fr")
    assert (catalog.render("fr", "doc_stopped", name="a.pdf", seconds="3 s")
            == "Lecture de **a.pdf** arrêtée après 3 s.")
    assert catalog.render("fr", "doc_chosen", name="a.pdf", budget="b", strategy="whole") == render(
        EN, "doc_chosen", name="a.pdf", budget="b", strategy="whole")  # not in fr: English
    assert [catalog.render("fr", "pages", count=n) for n in (1, 2)] == ["1 page", "2 pages"]
    assert catalog.render(ZH, "pages", count=2) == "2 pages"  # a language it lacks: English


def test_one_fact_has_one_id() -> None:
    """Two ids with one English sentence drift apart (an outside review found wait_first_answer and
    wait_whole: one English sentence, two Chinese ones). A sentence of words has one id, and so
    has a fragment whose two languages are both the same; a fragment alone (", ", " or ",
    "document") may differ in Chinese by where it stands, and keeps an id per place."""
    by_english: dict[str, list[str]] = {}
    by_both: dict[tuple[str, str], list[str]] = {}
    for key, english in CATALOG.items():
        chinese = SHIPPED.entries[ZH][key]
        one = english if isinstance(english, str) else " | ".join(english)
        if len(re.findall(r"[A-Za-z]+", re.sub(r"\{[^{}]*\}", "", one))) >= 3:
            by_english.setdefault(one, []).append(key)
        by_both.setdefault((one, chinese), []).append(key)
    assert [keys for keys in by_english.values() if len(keys) > 1] == []
    assert [keys for keys in by_both.values() if len(keys) > 1] == []


def named_ids(path: Path) -> list[tuple[str, str, set[str] | None]]:
    """(where, id, the fields passed or None where ** passes more) for each id the file names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        key = next((k.value for k in node.keywords if k.arg == "key"), None)
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        if key is not None:
            if not isinstance(key, ast.Constant):
                continue
        elif name in NAMING_CALLS and len(node.args) > NAMING_CALLS[name]:
            key = node.args[NAMING_CALLS[name]]
            if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
                continue
        else:
            continue
        passed = {k.arg for k in node.keywords if k.arg not in (None, "key")}
        found.append((where, key.value, None if any(k.arg is None for k in node.keywords) else passed))
    return found


def test_every_id_the_code_names_is_in_the_catalog_with_its_fields() -> None:
    named = [item for folder in ("glm1m", "chainlit_app", "server")
             for path in sorted((ROOT / folder).rglob("*.py")) for item in named_ids(path)]
    assert len(named) > 100  # the scan sees the code (errors, the page's t() calls)
    unknown = [(where, key) for where, key, _ in named if key not in CATALOG]
    assert unknown == []
    wrong = [(where, key, sorted(passed), sorted(field_names(key))) for where, key, passed in named
             if passed is not None and passed != field_names(key)]
    assert wrong == []


def test_every_error_a_person_reads_is_raised_by_its_id() -> None:
    """A UserFacingError (any class of glm1m/errors.py, or one of theirs) is raised with key= and
    its fields, so both doors say it in the reader's language; none is an English sentence."""
    import glm1m.errors

    classes = {name for name, value in vars(glm1m.errors).items()
               if isinstance(value, type) and issubclass(value, glm1m.errors.UserFacingError)}
    unkeyed = []
    for folder in ("glm1m", "chainlit_app", "server"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                name = getattr(node, "func", None)
                name = getattr(name, "id", None) or getattr(name, "attr", None)
                if (isinstance(node, ast.Call) and name in classes
                        and not any(k.arg == "key" for k in node.keywords)):
                    unkeyed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert unkeyed == []


def reported() -> tuple[set[str], set[str]]:
    """The stages and units the core's Progress(...) calls name (a stage as `Stage.X`)."""
    stages, units = set(), set()
    for path in sorted((ROOT / "glm1m").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Progress":
                stage = node.args[0]
                assert isinstance(stage, ast.Attribute), f"{path.relative_to(ROOT)}:{node.lineno}"
                if isinstance(stage.value, ast.Name) and stage.value.id == "Stage":
                    stages.add(Stage[stage.attr].value)
                units |= {k.value.value for k in node.keywords
                          if k.arg == "unit" and isinstance(k.value, ast.Constant)}
    return stages, units


def test_every_stage_and_unit_the_core_reports_is_said_in_both_languages() -> None:
    """A progress stage and its unit are ids, not English words a door reads back: each stage the
    core reports, and each unit it counts (a document's kinds, a table's rows or cells, parts and
    groups), has its words in both languages, and the catalog keeps none that nothing reports."""
    stages, units = reported()
    assert stages == {stage.value for stage in Stage}
    units |= {kind.unit for kind in Kind}
    units |= {TableSource.unit.fget(SimpleNamespace(chosen=chosen))  # type: ignore[attr-defined]
              for chosen in (("a",), ("a", "b"))}  # one column's rows, or several columns' cells
    assert {key for key in CATALOG if key.startswith("stage_")} == {f"stage_{s}" for s in stages}
    assert {key for key in CATALOG if key.startswith("unit_")} == {f"unit_{u}" for u in units}
    for stage in Stage:
        for unit in units:
            progress = Progress(stage, 1, 2, unit=unit, round=3, in_flight=1, tokens=5, failed=1)
            english, chinese = progress.line(EN), progress.line(ZH)
            assert english.startswith(progress.stage_words(EN) + ": 1 of 2 ") and "in flight" in english
            assert CHINESE.search(chinese) and not re.search(r"[a-z]{2}|: |, ", chinese), chinese
    assert "round 3" in Progress(Stage.COMBINING_ROUND, 0, 1, "groups", round=3).line(EN)
    assert "第 3 轮" in Progress(Stage.COMBINING_ROUND, 0, 1, "groups", round=3).line(ZH)


def test_english_says_one_page_and_two_pages_chinese_one_form() -> None:
    assert [render(EN, "pages", count=n) for n in (1, 2, 1200)] == ["1 page", "2 pages", "1,200 pages"]
    assert render(ZH, "pages", count=1) == "1 页"
    one, two = (DocumentError(key="doc_blank", name="a.pdf", count=n) for n in (1, 2))
    assert "its only page: it is blank, with nothing on it" in str(one)
    assert "any of its 2 pages: they are blank, with nothing on them" in str(two)
    assert "共 2 页" in two.in_language(ZH)


def test_fields_that_are_sentences_or_lists_follow_the_language() -> None:
    error = DocumentError(key="ocr_languages_missing", languages=["chi_sim", "eng"], folder="/t",
                          install=Said("ocr_install"))
    assert "for chi_sim, eng, which is not in /t. Install Tesseract" in str(error)
    assert "chi_sim、eng" in error.in_language(ZH) and "请安装 Tesseract" in error.in_language(ZH)


def test_a_locale_or_a_browser_tag_picks_the_language() -> None:
    assert [language_of(tag) for tag in ("zh_CN.UTF-8", "zh-CN", "zh_TW", "ZH")] == [ZH] * 4
    assert [language_of(tag) for tag in ("C.UTF-8", "en_US.UTF-8", "fr-FR", "", None)] == [EN] * 5


@pytest.mark.parametrize(("env", "words"), [
    ({"LANG": "zh_CN.UTF-8"}, "是空文件（0 字节）"),
    ({"LANG": "zh_CN.UTF-8", "GLM1M_LANG": "en"}, "is empty (0 bytes)"),
    ({"LANG": "C.UTF-8", "GLM1M_LANG": "zh"}, "是空文件（0 字节）"),
    ({"LC_ALL": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, "是空文件（0 字节）"),
    ({"LANG": "en_US.UTF-8"}, "is empty (0 bytes)")])
def test_the_cli_says_an_error_in_the_locales_language(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        env: dict[str, str], words: str) -> None:
    from glm1m.cli.main import main

    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "GLM1M_LANG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    (tmp_path / "空.pdf").write_bytes(b"")
    with pytest.raises(SystemExit) as ended:
        main(["extract", "空.pdf"])
    assert ended.value.code == 2
    said = capsys.readouterr().err
    assert said.startswith("glm1m: 空.pdf ") and words in said


@pytest.mark.parametrize(("lang", "line"), [
    ("zh", "glm1m: 识别扫描页（OCR）：2 / 2 页\n"), ("en", "glm1m: reading scanned pages (OCR): 2 of 2 pages\n")])
def test_the_cli_says_progress_in_the_locales_language(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        lang: str, line: str) -> None:
    from glm1m.cli.extract import throttled

    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GLM1M_LANG", lang)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    throttled()(Progress(Stage.OCR, 2, 2, unit="pages"))
    assert capsys.readouterr().err == line


def test_a_commands_name_is_a_catalog_entry_in_each_language() -> None:
    """The composer's commands are named from the catalog (the name is also the id the page gets
    back), so a language added to the catalog names them too."""
    from glm1m.chainlit_app import document_translation_flow, grid_flow, shelf_panel

    assert shelf_panel.COMMANDS == {EN: "Shelf", ZH: "文档架"}
    assert grid_flow.COMMANDS == {EN: "Grid", ZH: "问答表"}
    assert document_translation_flow.COMMANDS == {EN: "Translate", ZH: "翻译"}
    assert shelf_panel.is_shelf("文档架") and not shelf_panel.is_shelf("Grid")
