"""Issue 34, item 7, in real Chromium on a zh-CN page: a chat, a PDF (its preview opened), three
manuals read past the threshold by looking things up (a lookup's step opened), a table translated,
the settings opened; at each stop the page's visible text and its aria-labels, titles and
placeholders are scanned for English words. Allowed: code and preformatted text (a document's own
text in a lookup's step), file names, all-capital abbreviations (PDF, CSV), single letters (the
documents' A, B, C), words with digits (glm1m), and the words the model itself wrote (the demo
model writes noise, in any language). And the page asks no host but 127.0.0.1 (fonts, KaTeX)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Page

from tests.app.test_look_up_ui import lookup_app  # noqa: F401  (a fixture: the app asking past 500 tokens)
from tests.app.test_real_manuals_set import SMALL, present
from tests.browser.conftest import ask, only_loopback, open_chat, screenshot
from tests.browser.test_newcomer_translation import attach, write_csv
from tests.conftest import App
from tests.support.pdfs import make_pdf

pytestmark = pytest.mark.browser
ANSWERS = '[data-step-type="assistant_message"] .message-content'
# Words that are names, not English: kept as they are on a Chinese page too.
NAMES = {"glm", "vLLM", "Chainlit", "Markdown", "Tesseract", "PyMuPDF"}

# Each text node and each labelling attribute of the page, with whether it sits in code.
TEXTS = r"""() => {
  const out = [];
  const hidden = e => { for (; e; e = e.parentElement) {
      const s = getComputedStyle(e); if (s.display === 'none' || s.visibility === 'hidden') return true; }
    return false; };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!e || !n.textContent.trim() || ['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(e.tagName)) continue;
    if (hidden(e)) continue;
    // A PDF's own text (the preview's text layer), a cited passage's (the side view Chainlit
    // opens beside an answer: the document's words, English here), a file icon's suffix and the
    // sidebar's list of the user's chats (each named by its first message: the user's words, in
    // whatever language the page had then; the local user keeps every chat) count as code.
    const code = !!e.closest('pre, code, kbd, .react-pdf__Page, svg, #side-view-content, #thread-history');
    const message = e.closest('.message-content');
    const step = e.closest('button');
    out.push({text: n.textContent, code: code, where: e.outerHTML.slice(0, 160),
              message: message ? message.innerText : '',
              step: step && /^(已使用\s*)?(查找|阅读)：/.test(step.innerText.trim()) ? step.innerText : ''});
  }
  for (const e of document.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
    for (const a of ['aria-label', 'title', 'placeholder', 'alt']) {
      const v = e.getAttribute(a);
      if (v && v.trim()) out.push({text: v, code: false, where: a + ' of ' + e.outerHTML.slice(0, 120),
                                   message: '', step: ''});
    }
  }
  return out;
}"""


FILE_NAME = re.compile(r"[^\s（）()、，,：:]+\.[A-Za-z0-9]{1,5}(?![A-Za-z0-9])")
WINDOW = 16  # characters of a message found in what the model wrote: the message is its answer


def english_words(text: str) -> list[str]:
    found = []
    for token in re.split(r"[^A-Za-z0-9_.\-/:@'’]+", FILE_NAME.sub(" ", text)):
        word = token.strip(".-:/'’_@")
        if (len(re.sub("[^A-Za-z]", "", word)) < 2 or re.search(r"[0-9./_:@]", word)
                or word.isupper() or word in NAMES):
            continue
        found.append(word)
    return found


def compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def the_models(item: dict, written: str, windows: set[str]) -> bool:
    """An answer's body (a message that shares a run of WINDOW characters with what the model
    wrote), or a lookup step's name, whose words the model chose."""
    if item["step"]:
        return True
    shown = compact(item["message"])
    return any(shown[i:i + WINDOW] in windows for i in range(0, max(0, len(shown) - WINDOW + 1)))


def model_text(app: App) -> str:
    """Everything the model wrote: answers and tool-call arguments, as the proxy forwarded them."""
    written = []
    for _, body in app.proxy.journal:
        for line in body.decode(errors="replace").splitlines():
            if not line.startswith("data: {"):
                continue
            for choice in json.loads(line[6:]).get("choices", []):
                delta = choice.get("delta") or choice.get("message") or {}
                written.append(delta.get("content") or choice.get("text") or "")
                calls = delta.get("tool_calls") or []
                written += [c.get("function", {}).get("arguments") or "" for c in calls]
    return "".join(written)


class Scan:
    """The page's texts at each stop, judged at the end, once every answer the model wrote is in
    the proxy's journal."""

    def __init__(self, page: Page, app: App) -> None:
        self.page, self.app = page, app
        self.taken: list[tuple[str, dict]] = []  # (stop, {text, code, where})

    def __call__(self, stop: str) -> None:
        screenshot(self.page, f"zh-whole-{stop}")
        self.taken += [(stop, item) for item in self.page.evaluate(TEXTS)]

    def english(self) -> list[tuple[str, str, str]]:
        written = compact(model_text(self.app))
        windows = {written[i:i + WINDOW] for i in range(len(written) - WINDOW + 1)}
        return [(stop, word, item["where"]) for stop, item in self.taken
                if not item["code"] and not the_models(item, written, windows)
                for word in english_words(item["text"])]


@pytest.fixture
def zh(browser: Browser, lookup_app: App) -> Iterator[tuple[Page, list[str]]]:  # noqa: F811
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.route("**/*", only_loopback)
    yield page, asked
    context.close()


def finished(page: Page) -> None:
    """The turn is over: the stop button gone, the send button back."""
    page.wait_for_selector("#stop-button", state="detached", timeout=300_000)
    page.wait_for_selector("#chat-submit", timeout=60_000)


def test_a_zh_page_shows_no_english_and_asks_no_outside_host(
        zh: tuple[Page, list[str]], lookup_app: App, tmp_path: Path) -> None:  # noqa: F811
    page, asked = zh
    scan = Scan(page, lookup_app)
    open_chat(page, lookup_app.url)
    page.wait_for_selector(f"{ANSWERS} >> text=演示模式")
    ask(page, "你好，请介绍一下你自己。")
    finished(page)
    scan("chat")

    pdf = make_pdf(tmp_path / "说明.pdf", ["第一页。This is page 1. The terms apply."])
    page.set_input_files("#upload-button-input", str(pdf))
    page.wait_for_selector("#attachments >> text=说明.pdf")
    ask(page, "这份文件讲什么？")
    page.wait_for_selector("text=/已读取/", timeout=180_000)
    finished(page)
    preview = page.locator(".inline-pdf").first
    preview.wait_for(timeout=60_000)
    scan("document")
    preview.click()
    page.wait_for_selector("[role=dialog] canvas", timeout=60_000)
    scan("pdf-preview")
    page.keyboard.press("Escape")

    page.set_input_files("#upload-button-input", [str(path) for path in present(SMALL)])
    for path in SMALL:
        page.wait_for_selector(f"#attachments >> text={path.name}")
    ask(page, "哪个手册讲 JSON？")
    page.wait_for_selector("button:has-text('查找阅读')", timeout=300_000)
    scan("strategy-choice")
    page.click("button:has-text('查找阅读')")
    page.wait_for_selector("text=/已在 .* 中查找阅读/", timeout=300_000)
    finished(page)
    step = page.locator("button:has-text('查找：'), button:has-text('阅读：')").first
    step.wait_for(timeout=30_000)
    step.click()
    scan("look-up-step")

    source = write_csv(tmp_path / "条款.csv", ["内容"], [[f"第{i}条"] for i in range(3)])
    attach(page, source)
    page.wait_for_selector("text=/已完成：已翻译 3 \\/ 3 行，用时/", timeout=300_000)
    finished(page)
    scan("translated")
    page.click("#chat-settings-open-modal")
    page.wait_for_selector("text=表格翻译的目标语言")
    page.wait_for_function("() => [...document.querySelectorAll('[role=dialog]')].every("
                           "d => getComputedStyle(d).opacity === '1')")
    page.locator("[role=dialog] [role=combobox]").first.click()  # the target language's choices
    scan("settings")
    page.keyboard.press("Escape")

    found = scan.english()
    out = Path(__file__).resolve().parents[2] / "var" / "screenshots" / "zh-whole-english.json"
    out.write_text(json.dumps(found, ensure_ascii=False, indent=1), encoding="utf-8")
    assert not found, f"{len(found)} English words, first: {found[:15]}"
    outside = sorted({url for url in asked if urlparse(url).scheme in ("http", "https", "ws", "wss")
                      and urlparse(url).hostname != "127.0.0.1"})
    assert not outside, outside
