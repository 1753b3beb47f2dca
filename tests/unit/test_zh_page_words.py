"""Issue 34, item 7: a Chinese page has no English of Chainlit's or glm1m's own, and asks no other
host. Chainlit 2.12's frontend writes some words in English with no translation key; the page's
zh_chainlit.js says them in Chinese, and this fails on the release that stops writing one of them
(then the script's table needs the release's new words). Its page linked Google Fonts and KaTeX
from jsDelivr; `glm1m up` serves it without them (custom_build)."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

from glm1m.chainlit_app.i18n import EN, ZH
from glm1m.chainlit_app.settings_panel import languages
from glm1m.cli.up import OFFLINE_FRONTEND, offline_frontend, prepare_ui_root
from glm1m.settings import Settings

UI = Path(__file__).resolve().parents[2] / "chainlit_app" / "ui"
DIST = Path(importlib.util.find_spec("chainlit").origin).parent / "frontend" / "dist"  # type: ignore[arg-type, union-attr]


def script_words() -> dict[str, str]:
    script = (UI / "public" / "zh_chainlit.js").read_text(encoding="utf-8")
    block = script.split("// WORDS START")[1].split("// WORDS END")[0]
    return dict(re.findall(r'^\s*"([^"]+)": "([^"]+)",?$', block, re.MULTILINE))


def test_every_word_the_script_translates_is_one_chainlit_writes() -> None:
    words = script_words()
    assert "Loading preview..." in words and "Toggle theme" in words and len(words) >= 15
    bundle = "".join(path.read_text(encoding="utf-8") for path in (DIST / "assets").glob("index-*.js"))
    gone = [english for english in words if f'"{english}"' not in bundle]
    script = (UI / "public" / "zh_chainlit.js").read_text(encoding="utf-8")
    around = re.findall(r'"([^"]+)": "[^"]+"', script.split("var AROUND = ")[1].split(";")[0])
    gone += [before for before in around if f"`{before}${{" not in bundle]  # `Avatar for ${name}`
    assert around and not gone, f"Chainlit no longer writes these: {gone}"
    for chinese in words.values():
        assert not re.search(r"[a-z]", chinese.replace("PDF", "")), chinese


def test_the_page_loads_the_script_only_in_chinese() -> None:
    lang = (UI / "public" / "lang.js").read_text(encoding="utf-8")
    assert 'indexOf("zh") === 0' in lang and "zh_chainlit.js" in lang
    config = tomllib.loads((UI / ".chainlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["UI"]["custom_js"] == "/public/lang.js"


def test_chainlit_links_only_the_outside_hosts_taken_out() -> None:
    index = (DIST / "index.html").read_text(encoding="utf-8")
    hosts = set(re.findall(r'(?:href|src)="https?://([^/"]+)', index))
    assert hosts == {"fonts.googleapis.com", "fonts.gstatic.com", "cdn.jsdelivr.net"}, hosts


def test_the_page_served_asks_no_other_host(tmp_path: Path) -> None:
    build = offline_frontend(tmp_path / "build")
    index = (build / "index.html").read_text(encoding="utf-8")
    assert "http://" not in index and "https://" not in index
    assert re.search(r'src="/assets/index-[^"]+\.js"', index)
    for asset in re.findall(r'(?:src|href)="/(assets/[^"]+)"', index):
        assert (build / asset).is_file(), asset
    offline_frontend(build)  # again: an upgrade's start finds the folder there
    config = tomllib.loads((UI / ".chainlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["UI"]["custom_build"] == OFFLINE_FRONTEND
    assert config["features"]["latex"] is False  # KaTeX's stylesheet is not served


def test_glm1m_up_puts_the_page_and_its_scripts_in_the_data_dir(tmp_path: Path) -> None:
    root = prepare_ui_root(Settings(data_dir=tmp_path))
    assert (root / "public" / "zh_chainlit.js").is_file() and (root / "public" / "lang.js").is_file()
    assert "https://" not in (root / OFFLINE_FRONTEND / "index.html").read_text(encoding="utf-8")


def test_the_languages_offered_are_named_in_the_page_language() -> None:
    chinese, english = languages(ZH), languages(EN)
    assert list(chinese.values()) == list(english.values())  # the values kept do not change
    assert list(chinese)[:3] == ["英文", "简体中文", "繁体中文"]
    assert not any(re.search("[A-Za-z]", name) for name in chinese)
    assert list(english)[:3] == ["English", "Simplified Chinese", "Traditional Chinese"]


def test_a_lookup_that_read_nothing_tells_the_model_in_english_and_the_page_in_its_language() -> None:
    from glm1m.documents.lookup import read
    from tests.unit.test_lookup import LIMITS, SET

    nothing = read(SET, "A 99", LIMITS)
    assert nothing.result.startswith("There is no A 99. The documents hold:\n- A ")  # the model's
    assert nothing.shown(EN) == nothing.result
    chinese = nothing.shown(ZH)
    assert chinese.startswith("没有 A 99。这些文档包含：\n- A ") and "页" in chinese
    assert not re.search(r"\b(There|pages?|sections?)\b", chinese)
    found = read(SET, "A 1", LIMITS)
    assert found.note is None and found.shown(ZH) == found.result  # the documents' own text
