"""The app's own sentences in English and Simplified Chinese: the browser's language picks them,
the target language defaults to the other one, progress reads in Chinese, a file-only message
gets its files' names, and a stream cut at max_tokens says so (finish_reason "length")."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import httpx

from glm1m.chainlit_app.file_only import FILES_ONLY, name_files, typed_text
from glm1m.chainlit_app.i18n import EN, ZH, default_target, language_of, seconds, t
from glm1m.llm import ChatParams, CutAtLimit, LlmClient, Piece, text_of
from glm1m.progress import Progress, Stage
from glm1m.settings import Settings


def test_the_browser_language_picks_chinese_for_any_zh_tag_and_english_otherwise() -> None:
    assert [language_of(tag) for tag in ("zh-CN", "zh-TW", "zh", "ZH-cn")] == [ZH] * 4
    assert [language_of(tag) for tag in ("en-US", "fr-FR", "", None)] == [EN] * 4


def test_the_target_language_defaults_to_the_other_of_the_two() -> None:
    assert default_target(ZH) == "English" and default_target(EN) == "简体中文"


# Every sentence having both languages with the same fields: tests/unit/test_catalog.py.


def test_chinese_sentences_are_chosen_for_a_chinese_browser() -> None:
    assert t(ZH, "label_max_tokens") == "最大新词元数" and t(EN, "label_max_tokens") == "Max new tokens"
    assert "演示模式" in t(ZH, "demo_banner") and "Demo mode" in t(EN, "demo_banner")
    assert seconds(ZH, 2.1) == "2.1 秒" and seconds(EN, 42) == "42 s" and seconds(EN, 600) == "10 minutes"


def test_the_welcome_names_every_format_and_what_each_kind_of_file_is_for() -> None:
    for lang in (EN, ZH):
        welcome = t(lang, "welcome", target="x", grace="20")
        for name in ("PDF", "DOCX", "EPUB", "MOBI", "FB2", "XPS", "TXT", "Markdown", "HTML", "OCR",
                     "CSV", "XLSX"):
            assert name in welcome, (lang, name)


def test_progress_reads_in_chinese_with_rate_and_time_left() -> None:
    progress = Progress(Stage.TRANSLATING, 30, 300, unit="rows", failed=2, started=time.monotonic() - 10)
    line = progress.line(ZH)
    assert line.startswith("翻译：30 / 300 行（2 个失败）——每秒 3.0 行，约剩 90 秒") and line.endswith("秒")
    assert not re.search(r"[:,;()]| — ", line)  # Chinese punctuation throughout
    assert progress.line(EN).startswith("translating: 30 of 300 rows (2 failed) — 3.0 rows/s, about 90 s")


def test_a_message_with_only_files_gets_their_names_and_no_typed_text() -> None:
    files = {"f1": {"name": "terms.csv"}}
    payload = {"message": {"output": "", "metadata": {}}, "fileReferences": [{"id": "f1"}]}
    name_files(files, payload)
    assert payload["message"]["output"] == "Attached: terms.csv"
    assert payload["message"]["metadata"][FILES_ONLY]
    assert typed_text(payload["message"]["output"], payload["message"]["metadata"]) == ""
    chinese = {"message": {"output": " ", "metadata": {}}, "fileReferences": [{"id": "f1"}]}
    name_files(files, chinese, ZH)
    assert typed_text(chinese["message"]["output"], chinese["message"]["metadata"]) == ""
    assert chinese["message"]["output"] == "附件：terms.csv"
    edited = "附件：terms.csv 请翻译"  # the user edited the message: their words count
    assert typed_text(edited, chinese["message"]["metadata"]) == edited
    typed = {"message": {"output": "Summarise it", "metadata": {}}, "fileReferences": [{"id": "f1"}]}
    name_files(files, typed)
    assert typed["message"]["output"] == "Summarise it" and typed_text("Summarise it", {}) == "Summarise it"


def sse(*chunks: tuple[str, str | None]) -> str:
    lines = [json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                         "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": end}]})
             for text, end in chunks]
    return "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"


async def stream(tmp_path: Path, body: str) -> list[Piece]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})

    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=0, api_key="k", data_dir=tmp_path)
    llm = LlmClient(settings, transport=httpx.MockTransport(handler))
    try:
        return [piece async for piece in llm.stream_chat([{"role": "user", "content": "hi"}],
                                                         ChatParams(0.0, 2))]
    finally:
        await llm.aclose()


async def test_a_stream_cut_at_max_tokens_ends_with_an_empty_cut_marker(tmp_path: Path) -> None:
    pieces = await stream(tmp_path, sse(("Hel", None), ("lo", "length")))
    assert text_of(pieces) == "Hello" and isinstance(pieces[-1], CutAtLimit)
    finished = await stream(tmp_path, sse(("Hel", None), ("lo", "stop")))
    assert finished == ["Hel", "lo"] and not any(isinstance(p, CutAtLimit) for p in finished)
