"""Issue 26: progress that moves while work runs, in real Chromium on the real app and demo server.

A table of fewer rows than the fan-out's concurrency is sent to the server at once and vLLM
batches it, so its rows finish nearly together at the end. Before the streamed progress (run on
the commit before 909914a) this page said 'translating: 0 of 50 rows', then '1 of 50 rows — 0.2
rows/s, about 266 s left', then '50 of 50 rows — 8.8 rows/s' and the end: three lines, none of the
rows in flight. Now the line moves with the rows in flight and the tokens they get back.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import ask, only_loopback, open_chat
from tests.conftest import App, ModelServer, started_app
from tests.support.fault_proxy import FaultProxy

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
ROWS = 50
# Rows long enough to take the demo server some seconds (its random weights never end a row
# early): at 16 tokens a row, the shared app's, a 50-row run took about 2 s and its line changed
# four or five times however it was drawn; at 160, 4.7 s and ten times.
TRANSLATE_MAX_TOKENS = 400
JOB_S = 120  # from the upload to the job's record: 12 s on a 2-core machine shared with others

# Every distinct text of the job's message, in the order the page showed them, recorded in the
# page as the DOM changes (a poll from the test could miss a line the page showed for 0.5 s).
RECORD_JOB_LINES = """([selector, name]) => {
  window.jobLines = [];
  const record = () => {
    const job = [...document.querySelectorAll(selector)].find(m => m.innerText.includes(name));
    if (!job) return;
    const lines = job.innerText.trim().split('\\n').filter(line => line.trim());
    const text = lines[lines.length - 1];
    if (window.jobLines[window.jobLines.length - 1] !== text) window.jobLines.push(text);
  };
  new MutationObserver(record).observe(document.body,
                                       {childList: true, subtree: true, characterData: true});
  record();
}"""


@pytest.fixture(scope="module")
def long_rows_app(model_server: ModelServer, fault_proxy: FaultProxy, log_dir: Path,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """The demo app with rows of TRANSLATE_MAX_TOKENS tokens, in a data dir of its own (so it is
    given the server's key: it finds none there)."""
    yield from started_app("chainlit-job-progress", model_server, fault_proxy, log_dir,
                           tmp_path_factory.mktemp("job-progress-data"),
                           GLM1M_API_KEY=model_server.api_key,
                           GLM1M_TRANSLATE_MAX_TOKENS=str(TRANSLATE_MAX_TOKENS))


@pytest.fixture
def page(browser: Browser, long_rows_app: App, healthy_proxy: FaultProxy) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield page
    context.close()


@pytest.mark.timeout(180, func_only=True)  # the run and its page; the fixtures' starts apart
def test_the_job_line_moves_with_rows_in_flight_before_any_row_is_finished(
        page: Page, long_rows_app: App, tmp_path: Path) -> None:
    from glm1m.settings import Settings

    # The app runs with the default concurrency: all rows asked at once, vLLM runs them as one batch.
    assert ROWS < Settings.model_fields["translate_concurrency"].default
    source = tmp_path / "progress.csv"
    with source.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["text"], *([f"Sentence {i} of the quarterly report."]
                                             for i in range(ROWS))])
    open_chat(page, long_rows_app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=Demo mode")
    page.evaluate(RECORD_JOB_LINES, [ANSWERS, source.name])
    page.set_input_files("#upload-button-input", str(source))
    page.wait_for_selector(f"#attachments >> text={source.name}")
    ask(page, "")
    page.wait_for_function("() => window.jobLines.some(line => line.startsWith('Finished:'))",
                           timeout=JOB_S * 1000)
    lines: list[str] = page.evaluate("() => window.jobLines")
    end = next(i for i, line in enumerate(lines) if line.startswith("Finished:"))
    # Every row translated: a key the server refuses fails each row at once, and the line never
    # moves (an app started with a data dir of its own and no GLM1M_API_KEY did just that).
    assert lines[end].startswith(f"Finished: {ROWS} of {ROWS} rows translated in"), lines
    running = [line for line in lines[:end] if line.startswith("translating:")]
    assert len(set(running)) >= 6, lines  # before the streamed progress: 0, 1, then 50 of 50
    before_a_row = running[:next((i for i, line in enumerate(running)
                                  if not line.startswith(f"translating: 0 of {ROWS} ")), len(running))]
    assert any(re.match(rf"translating: 0 of {ROWS} rows, [\d,]+ in flight — [\d,]+ tokens", line)
               for line in before_a_row), lines
