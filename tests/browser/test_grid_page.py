"""Issue 36's page, in real Chromium on the real app and demo server, in English and in Chinese:
three Markdown reports attached with the composer's Grid command (问答表) and two questions typed
one a line (sent again in English as an attached questions file); the job's line moves cell by
cell; the stop button stops it once a document is finished and another is on its way, and says
how many documents are kept; the same documents and questions sent again continue (the page says
how many were answered before, and the proxy sees none of their text asked again); the XLSX comes
back, downloads, and opens with openpyxl with its sheets grid and passages, a row a document. The
Chinese page shows no English words of glm1m's.

The app runs one document at a time (GLM1M_GRID_CONCURRENCY=1), so documents finish in turn and
a stop between them is a stop with some kept and some not; its cells are 96 tokens (the demo's
random weights never end one early), about a second each on this machine (3 to 11 s a run).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from openpyxl import load_workbook
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.browser.test_zh_whole_page import TEXTS, english_words
from tests.conftest import App, ModelServer, started_app
from tests.support.fault_proxy import FaultProxy

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
JOB_S = 240  # from the message to the job's record, on a 2-core machine shared with other work
HELD_S = 300  # a held completion's wait: longer than the test, so the job is stopped, not done
COMPANIES = ("Aldermoor", "Brightwell", "Corvana")

# Every distinct last line of the job's message, in the order the page showed them, recorded in
# the page as the DOM changes (a poll from the test could miss a line shown for half a second).
RECORD_JOB_LINES = """(name) => {
  window.jobLines = [];
  const record = () => {
    const job = [...document.querySelectorAll('.message-content')].reverse()
      .find(m => m.innerText.includes(name) && m.closest('[data-step-type="assistant_message"]'));
    if (!job) return;
    const lines = job.innerText.trim().split('\\n').filter(line => line.trim());
    const text = lines[lines.length - 1];
    if (window.jobLines[window.jobLines.length - 1] !== text) window.jobLines.push(text);
  };
  new MutationObserver(record).observe(document.body,
                                       {childList: true, subtree: true, characterData: true});
  record();
}"""

# What each language's page says, as regular expressions over its lines.
WORDS = {
    "en": {"command": "Grid", "banner": "Demo mode", "file": "grid.xlsx",
           "questions": "What was the revenue in 2025?\nWho is the chief executive?",
           "asking": r"^asking: (\d+) of 6 cells", "stopped": r"Stopped after .*?: (\d+) of 6 cells "
           r"answered; (\d+) of 3 documents have all their answers and are kept",
           "continuing": "Continuing: {kept} of 3 documents were answered before and are not asked again",
           "finished": r"Finished in .*?6 cells: ", "resumed": r"{kept} documents? (was|were) answered "
           r"before: not asked again"},
    "zh": {"command": "问答表", "banner": "演示模式", "file": "问答表.xlsx",
           "questions": "2025 年的营业收入是多少？\n首席执行官是谁？",
           "asking": r"^提问：(\d+) / 6 个单元格", "stopped": r"已停止，用时 .*?：已回答 (\d+) / 6 个单元格；"
           r"3 份文档中有 (\d+) 份已全部回答并保留",
           "continuing": "继续上次的任务：3 份文档中已有 {kept} 份此前回答完毕，不再重复提问",
           "finished": r"已完成，用时 .*?6 个单元格：", "resumed": r"{kept} 个文档此前已回答：不再重复提问"},
}


@pytest.fixture(scope="module")
def grid_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The demo app asking one document at a time, 96 tokens a cell, in a data dir of its own
    (so it is given the server's key: it finds none there)."""
    yield from started_app("chainlit-grid", model_server, fault_proxy, log_dir,
                           tmp_path_factory.mktemp("grid-data"), GLM1M_API_KEY=model_server.api_key,
                           GLM1M_GRID_CONCURRENCY="1", GLM1M_MAX_TOKENS="96")


@pytest.fixture(params=["en", "zh"])
def lang_page(request: pytest.FixtureRequest, browser: Browser, grid_app: App,
              healthy_proxy: FaultProxy) -> Iterator[tuple[str, Page]]:
    locale = "zh-CN" if request.param == "zh" else "en-US"
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield request.param, page
    context.close()


def reports(folder: Path, unique: str) -> list[Path]:
    """Three short quarterly reports, each holding its facts and a marker of its own."""
    paths = []
    for number, company in enumerate(COMPANIES):
        path = folder / f"{company.lower()}-{unique}.md"
        path.write_text(f"# {company} annual report\n\nMarker {company}-{unique}.\n\n## Revenue\n\n"
                        f"Revenue in 2025 was {120 + 35 * number} million yuan, up {4 + number} %.\n\n"
                        f"## Leadership\n\nThe chief executive is {company} Lee, since {2015 + number}.\n",
                        encoding="utf-8")
        paths.append(path)
    return paths


def send_grid(page: Page, lang: str, documents: list[Path], questions: Path | None = None) -> None:
    """The documents attached, the Grid command chosen and the questions sent: typed, or a
    questions file attached without words. The input is emptied first: the page takes no change
    event for the files it last took."""
    files = [*documents, *([questions] if questions else [])]
    page.eval_on_selector("#upload-button-input", "input => { input.value = '' }")
    page.set_input_files("#upload-button-input", [str(path) for path in files])
    for path in files:
        page.wait_for_selector(f"#attachments >> text={path.name}")
    page.click(f"[id='command-{WORDS[lang]['command']}']")
    ask(page, "" if questions else WORDS[lang]["questions"])


def wait_text(page: Page, pattern: str, timeout_s: float) -> str:
    """The latest message of the app whose text matches `pattern` (a JavaScript RegExp), once
    there is one."""
    found = page.wait_for_function(
        f"""(pattern) => [...document.querySelectorAll('{ANSWERS}')].map(m => m.innerText)
              .reverse().find(text => new RegExp(pattern).test(text))""",
        arg=pattern, timeout=timeout_s * 1000)
    return str(found.json_value())


def job_lines(page: Page) -> list[str]:
    return page.evaluate("() => window.jobLines")


def asked_documents(proxy: FaultProxy, unique: str) -> set[str]:
    """The reports whose text a completion through the proxy carried (its journal: the chat
    messages, or what the token ids it was sent are)."""
    prompts = [str(request.get("messages") or request.get("prompt")) for request, _ in proxy.journal]
    return {company for company in COMPANIES if any(f"{company}-{unique}" in p for p in prompts)}


@pytest.mark.timeout(2 * JOB_S + 120, func_only=True)  # two runs and their pages; the app's start apart
def test_a_grid_moves_stops_resumes_and_hands_back_its_xlsx(lang_page: tuple[str, Page], grid_app: App,
                                                            tmp_path: Path) -> None:
    lang, page = lang_page
    words = WORDS[lang]
    unique = uuid.uuid4().hex[:10]  # the app's shelf and grids outlive a test: new bytes each time
    documents = reports(tmp_path, unique)
    open_chat(page, grid_app.url)
    page.wait_for_selector(f"{ANSWERS} >> text={words['banner']}")
    page.evaluate(RECORD_JOB_LINES, documents[0].name)
    send_grid(page, lang, documents)

    # The line moves a cell at a time; once the first document is done, every later completion is
    # held, so the stop comes with one or two documents kept and at least one not.
    page.wait_for_function("(p) => window.jobLines.some(line => { const m = line.match(new RegExp(p));"
                           " return m && Number(m[1]) >= 2; })", arg=words["asking"], timeout=JOB_S * 1000)
    grid_app.proxy.hold_every_completion(HELD_S)
    assert grid_app.proxy.holding.wait(JOB_S), grid_app.proxy.in_flight()
    screenshot(page, f"grid-{lang}-running")
    page.click("#stop-button")
    record = wait_text(page, words["stopped"], 60)
    done, kept = (int(n) for n in re.search(words["stopped"], record).groups())
    assert 2 <= done < 6 and 1 <= kept < 3, record
    counts = [int(m.group(1)) for line in job_lines(page) if (m := re.match(words["asking"], line))]
    assert counts[0] < counts[-1] and len(set(counts)) >= 2, job_lines(page)  # it moved
    page.wait_for_selector("#chat-submit", timeout=60_000)  # the composer is back
    screenshot(page, f"grid-{lang}-stopped")

    grid_app.proxy.reset()  # nothing held, an empty journal: what the rerun asks, alone
    page.evaluate(RECORD_JOB_LINES, documents[0].name)
    if lang == "en":  # the same questions as a questions file: the same job, so it continues
        questions = tmp_path / "questions.csv"
        questions.write_text("question\n" + words["questions"] + "\n", encoding="utf-8")
        send_grid(page, lang, documents, questions)
        wait_text(page, r"Asking 2 questions \(from questions\.csv\) of 3 documents", 60)
    else:
        send_grid(page, lang, documents)
    page.wait_for_selector(f"text={words['continuing'].format(kept=kept)}", timeout=60_000)
    finished = wait_text(page, words["finished"], JOB_S)
    assert re.search(words["resumed"].format(kept=kept), finished), finished
    assert len(asked_documents(grid_app.proxy, unique)) == 3 - kept  # the kept ones not asked again
    screenshot(page, f"grid-{lang}-finished")

    with page.expect_download() as download:
        page.locator(f"a:has-text('{words['file']}'), button:has-text('{words['file']}')").last.click()
    assert download.value.suggested_filename == words["file"]
    saved = tmp_path / words["file"]  # openpyxl opens a workbook by its name's suffix
    download.value.save_as(saved)
    book = load_workbook(saved)
    assert {"grid", "passages"} <= set(book.sheetnames), book.sheetnames
    rows = list(book["grid"].iter_rows(values_only=True))
    assert len(rows) == 1 + len(documents), rows
    assert [row[0] for row in rows[1:]] == [path.name for path in documents]
    assert len(rows[0]) == 3  # the document, then a column a question
    if lang == "zh":
        found = [(word, item["where"]) for item in page.evaluate(TEXTS) if not item["code"]
                 for word in english_words(item["text"])]
        assert not found, found
