"""Issue 37, item 4, in real Chromium on the real app and demo server, in English and in Chinese:
a Markdown document of six sections attached with the composer's Translate command (翻译); the
first status line names the ⚙ panel's target (on the Chinese page the English report goes into
简体中文 instead of the page's default English, and the page says why); the job's line moves section by section; the stop
button stops it once two are finished and another is held, and hands back the file with the
finished sections (the rest marked); the same document sent again continues (the page says how
many were done before, and the proxy sees only the others asked); the translated Markdown comes
back, downloads and opens with its headings, blank lines and marks in place, beside its glossary;
sent once more, it is offered as it is (English) or translated anew (Chinese). The Chinese page
shows no English words of glm1m's.

The app translates one section at a time (GLM1M_TRANSLATE_CONCURRENCY=1), so sections finish in
turn and a stop between them keeps some and not others; a section is 32 tokens of the demo's
random weights, well under a second on this machine.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.browser.test_grid_page import ANSWERS, RECORD_JOB_LINES, job_lines, wait_text
from tests.browser.test_zh_whole_page import TEXTS, english_words
from tests.conftest import App, ModelServer, started_app
from tests.support.fault_proxy import FaultProxy

pytestmark = pytest.mark.browser
JOB_S = 240  # from the message to the job's record, on a 2-core machine shared with other work
HELD_S = 300  # a held completion's wait: longer than the test, so the job is stopped, not done
SECTIONS = 6

# What each language's page says, as regular expressions over its lines.
WORDS = {
    "en": {"command": "Translate", "banner": "Demo mode", "tag": "translated",
           "head": r"Translating {name} from the language the model detects into Simplified Chinese",
           "moving": r"^translating: (\d+) of 6 sections",
           "stopped": r"Stopped: (\d+) of 6 sections translated after",
           "continuing": "Continuing: {kept} of 6 sections were done before; translating the other {left}.",
           "finished": r"Finished: (\d+) of 6 sections translated \((\d+) by an earlier run",
           "before": "was translated into Simplified Chinese before", "choice": "The result",
           "again": r"The translation of {name} into Simplified Chinese made before"},
    "zh": {"command": "翻译", "banner": "演示模式", "tag": "译文",
           "head": r"把 {name} 从模型识别出的语言逐段翻译成简体中文",
           # the page's default target is English, but the report is English already (47f0e2e)
           "moved": "该文档已是英文，因此翻译成简体中文",
           "moving": r"^翻译：(\d+) / 6 节",
           "stopped": r"已停止：已翻译 (\d+) / 6 节",
           "continuing": "继续上次的任务：此前已完成 {kept} / 6 节，现在翻译其余 {left} 节。",
           "finished": r"已完成：已翻译 (\d+) / 6 节（此前已完成 (\d+)",
           "before": "此前已翻译成简体中文", "choice": "重新翻译",
           "again": r"^已完成：已翻译 \d+ / 6 节(?!（此前)"},
}


@pytest.fixture(scope="module")
def translating_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The demo app translating one section at a time, 32 tokens a section, in a data dir of its
    own (so it is given the server's key: it finds none there)."""
    yield from started_app("chainlit-doc-translate", model_server, fault_proxy, log_dir,
                           tmp_path_factory.mktemp("doc-translate-data"), GLM1M_API_KEY=model_server.api_key,
                           GLM1M_TRANSLATE_CONCURRENCY="1", GLM1M_TRANSLATE_MAX_TOKENS="32")


@pytest.fixture(params=["en", "zh"])
def lang_page(request: pytest.FixtureRequest, browser: Browser, translating_app: App,
              healthy_proxy: FaultProxy) -> Iterator[tuple[str, Page]]:
    locale = "zh-CN" if request.param == "zh" else "en-US"
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield request.param, page
    context.close()


def report(folder: Path, unique: str) -> Path:
    """Three headings and three paragraphs: six sections, each with a marker of its own."""
    path = folder / f"report-{unique}.md"
    path.write_text(f"# Annual report {unique}\n\nThe company grew in 2025, marker one-{unique}.\n\n"
                    f"## Revenue\n\nRevenue was 120 million yuan, marker two-{unique}.\n\n"
                    f"## Leadership\n\nThe chief executive is Lee, marker three-{unique}.\n",
                    encoding="utf-8")
    return path


def send_translate(page: Page, lang: str, document: Path) -> None:
    """The document attached, the Translate command chosen, sent without words. The input is
    emptied first: the page takes no change event for the files it last took."""
    page.eval_on_selector("#upload-button-input", "input => { input.value = '' }")
    page.set_input_files("#upload-button-input", [str(document)])
    page.wait_for_selector(f"#attachments >> text={document.name}")
    page.click(f"[id='command-{WORDS[lang]['command']}']")
    ask(page, "")


def download(page: Page, name: str, folder: Path) -> Path:
    with page.expect_download() as started:
        page.locator(f"a:has-text('{name}'), button:has-text('{name}')").last.click()
    assert started.value.suggested_filename == name
    saved = folder / name
    started.value.save_as(saved)
    return saved


@pytest.mark.timeout(3 * JOB_S + 120, func_only=True)  # three runs and their pages; the app's start apart
def test_a_document_translates_stops_resumes_and_downloads(lang_page: tuple[str, Page],
                                                           translating_app: App, tmp_path: Path) -> None:
    lang, page = lang_page
    words = WORDS[lang]
    proxy = translating_app.proxy
    unique = uuid.uuid4().hex[:10]  # the app's jobs outlive a test: new bytes each time
    document = report(tmp_path, unique)
    output = f"report-{unique}.{words['tag']}.md"
    open_chat(page, translating_app.url)
    page.wait_for_selector(f"[data-step-type='assistant_message'] >> text={words['banner']}")
    page.evaluate(RECORD_JOB_LINES, document.name)
    send_translate(page, lang, document)
    wait_text(page, words["head"].format(name=re.escape(document.name)), 60)  # the target, first
    if "moved" in words:
        wait_text(page, words["moved"], 60)

    # The line moves a section at a time; once two are done, every later completion is held, so
    # the stop comes with two or more kept and at least one not.
    page.wait_for_function("(p) => window.jobLines.some(line => { const m = line.match(new RegExp(p));"
                           " return m && Number(m[1]) >= 2; })", arg=words["moving"], timeout=JOB_S * 1000)
    proxy.hold_every_completion(HELD_S)
    assert proxy.holding.wait(JOB_S), proxy.in_flight()
    screenshot(page, f"doc-translate-{lang}-running")
    page.click("#stop-button")
    record = wait_text(page, words["stopped"], 60)
    kept = int(re.search(words["stopped"], record).group(1))
    assert 2 <= kept < SECTIONS, record
    counts = [int(m.group(1)) for line in job_lines(page) if (m := re.match(words["moving"], line))]
    assert counts[0] < counts[-1] and len(set(counts)) >= 2, job_lines(page)  # it moved
    stopped = download(page, output, tmp_path / "stopped")  # the finished sections, the rest marked
    assert stopped.read_text(encoding="utf-8").count("<!-- glm1m") == SECTIONS - kept
    page.wait_for_selector("#chat-submit", timeout=60_000)  # the composer is back
    screenshot(page, f"doc-translate-{lang}-stopped")

    proxy.reset()  # nothing held, an empty journal: what the rerun asks, alone
    page.evaluate(RECORD_JOB_LINES, document.name)
    send_translate(page, lang, document)
    page.wait_for_selector(f"text={words['continuing'].format(kept=kept, left=SECTIONS - kept)}",
                           timeout=JOB_S * 1000)
    finished = wait_text(page, words["finished"], JOB_S)
    translated, resumed = (int(n) for n in re.search(words["finished"], finished).groups())
    assert resumed == kept, finished
    assert len(proxy.journal) == SECTIONS - kept  # the kept sections not asked again, nor the glossary
    screenshot(page, f"doc-translate-{lang}-finished")

    saved = download(page, output, tmp_path)
    source, result = document.read_text(encoding="utf-8"), saved.read_text(encoding="utf-8")
    assert source.count("\n\n") == result.count("\n\n")  # every blank line, in place
    assert [line.split(" ")[0] for line in result.splitlines() if line.startswith("#")] == ["#", "##", "##"]
    assert result.count("<!-- glm1m") == SECTIONS - translated  # a failed one (noise) is marked
    glossary = download(page, f"report-{unique}.{words['tag']}.glossary.csv", tmp_path)
    assert glossary.read_text(encoding="utf-8").startswith("term,translation")

    # Sent once more, finished: the page offers that result (taken in English: nothing asked) or a
    # new translation (in Chinese: every section asked again, none counted as an earlier run's).
    proxy.reset()
    send_translate(page, lang, document)
    page.wait_for_selector(f"text={words['before']}", timeout=60_000)
    page.click(f"button:has-text('{words['choice']}')")
    again = words["again"].format(name=re.escape(document.name))
    page.wait_for_function(f"""(p) => [...document.querySelectorAll('{ANSWERS}')]
                                .some(m => m.innerText.split('\\n').some(l => new RegExp(p).test(l)))""",
                           arg=again, timeout=JOB_S * 1000)
    assert len(proxy.journal) == (0 if lang == "en" else SECTIONS)
    if lang == "zh":
        found = [(word, item["where"]) for item in page.evaluate(TEXTS) if not item["code"]
                 for word in english_words(item["text"])]
        assert not found, found
