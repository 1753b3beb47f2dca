"""Headless Debian Chromium driven by Playwright; no browser download, no traffic off loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, Page, Route, sync_playwright

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Module scope: Playwright's sync API keeps an event loop running while it is open, which
    # would break the asyncio tests of other modules. launch() uses a fresh, empty profile.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def only_loopback(route: Route) -> None:
    # The page asks CDNs for fonts and KaTeX; this machine has no route there.
    host = urlparse(route.request.url).hostname
    route.continue_() if host in ("127.0.0.1", "localhost") else route.abort()


@pytest.fixture
def page(browser: Browser, app, healthy_proxy) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield page
    context.close()


@pytest.fixture  # a browser that asks for Simplified Chinese pages
def zh_page(browser: Browser, app, healthy_proxy) -> Iterator[Page]:
    context = browser.new_context(locale="zh-CN", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/*", only_loopback)
    yield page
    context.close()


def open_chat(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("#chat-input", timeout=60_000)


def ask(page: Page, text: str) -> None:
    page.fill("#chat-input", text)
    # The send button stays disabled until the socket is connected.
    page.wait_for_selector("#chat-submit:not([disabled])", timeout=60_000)
    page.press("#chat-input", "Enter")


def screenshot(page: Page, name: str) -> None:
    out = Path(__file__).resolve().parents[2] / "var" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out / f"{name}.png"))
