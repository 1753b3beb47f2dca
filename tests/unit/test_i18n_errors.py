"""The core's common error sentences as a Chinese browser (or a zh_CN terminal) shows them: each is
raised by the real core code (the real client over an httpx.MockTransport, the real readers, the
real job lock) with its catalog id, and reads in Chinese with its fields; a sentence without an id
keeps its English after a Chinese lead."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from glm1m.catalog import ZH
from glm1m.chat import Conversation
from glm1m.documents.pdf import extract
from glm1m.errors import DocumentError, JobAlreadyRunning, ServerError, UserFacingError
from glm1m.llm import ChatParams, LlmClient
from glm1m.settings import Settings
from glm1m.translation.lock import job_lock
from glm1m.translation.table import open_source
from tests.support.scripted_llm import ScriptedLlm

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def client(tmp_path: Path, handler) -> LlmClient:
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=0, api_key="k", data_dir=tmp_path)
    return LlmClient(settings, transport=httpx.MockTransport(handler))


async def raised_by(call) -> UserFacingError:
    with pytest.raises(UserFacingError) as raised:
        await call()
    return raised.value


def refused(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


async def server_errors(tmp_path: Path) -> list[UserFacingError]:
    down, busy = client(tmp_path, refused), client(tmp_path, lambda r: httpx.Response(503))
    try:
        return [await raised_by(lambda: down.max_model_len()), await raised_by(lambda: busy.max_model_len())]
    finally:
        await down.aclose()
        await busy.aclose()


def uses_entry(error: UserFacingError) -> bool:
    """Raised with a catalog id, so its Chinese is the catalog's, not its English after a lead."""
    return error.key is not None


def in_chinese(error: UserFacingError) -> str:
    return error.in_language(ZH)


async def test_server_down_and_busy_read_in_chinese_with_the_address(tmp_path: Path) -> None:
    down, busy = await server_errors(tmp_path)
    assert uses_entry(down) and "127.0.0.1:9" in in_chinese(down) and "没有响应" in in_chinese(down)
    assert uses_entry(busy) and "HTTP 503" in in_chinese(busy) and "繁忙" not in in_chinese(busy)


async def test_a_conversation_too_long_reads_in_chinese_with_its_numbers() -> None:
    llm = ScriptedLlm(context=64)
    conversation = Conversation("", [{"role": "user", "content": "word " * 400}])
    error = await raised_by(lambda: anext(conversation.reply("more", llm, ChatParams(0.0, 16))))
    assert uses_entry(error) and "新建对话" in in_chinese(error) and "64" in in_chinese(error)


def test_file_errors_read_in_chinese_with_the_file_name(tmp_path: Path) -> None:
    (tmp_path / "header.csv").write_text("id,text\n", encoding="utf-8")
    (tmp_path / "scan.pdf").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    (tmp_path / "empty.pdf").write_bytes(b"")
    errors: list[UserFacingError] = []
    for call in (lambda: open_source(tmp_path / "header.csv", None, "header.csv"),
                 lambda: extract(tmp_path / "scan.pdf", name="scan.pdf"),
                 lambda: extract(tmp_path / "empty.pdf", name="empty.pdf")):
        with pytest.raises(UserFacingError) as raised:
            call()
        errors.append(raised.value)
    with job_lock(tmp_path / "out.csv", "合同.csv"), pytest.raises(JobAlreadyRunning) as again:
        with job_lock(tmp_path / "out.csv", "合同.csv"):
            pass
    errors.append(again.value)
    for error, name in zip(errors, ("header.csv", "scan.pdf", "empty.pdf", "合同.csv"), strict=True):
        text = in_chinese(error)
        assert uses_entry(error), str(error)
        assert text.startswith(name) and CHINESE.search(text.removeprefix(name)), text


def test_a_sentence_without_an_entry_keeps_its_english_behind_a_chinese_lead() -> None:
    rare = DocumentError("odd.pdf holds text the server counts as 3 tokens per character.")
    assert in_chinese(rare) == f"文档无法使用：{rare}"
    assert in_chinese(ServerError("The model server failed: boom")).startswith("模型服务器出错：")


def test_workbook_and_text_file_errors_read_in_chinese(tmp_path: Path) -> None:
    from glm1m.documents.text import read_text_file
    from glm1m.translation.xlsx import OLE_MAGIC, check_container

    (tmp_path / "old.xlsx").write_bytes(OLE_MAGIC + b"\0" * 600)  # an Excel 97-2003 file renamed
    (tmp_path / "junk.xlsx").write_bytes(b"not a zip at all")
    (tmp_path / "bin.txt").write_bytes(b"abc\0def")
    settings = Settings(_env_file=None)
    calls = {"old.xlsx": lambda: check_container(tmp_path / "old.xlsx", "old.xlsx", settings),
             "junk.xlsx": lambda: check_container(tmp_path / "junk.xlsx", "junk.xlsx", settings),
             "bin.txt": lambda: read_text_file(tmp_path / "bin.txt", "bin.txt", False)}
    for name, call in calls.items():
        with pytest.raises(UserFacingError) as raised:
            call()
        assert uses_entry(raised.value), str(raised.value)
        text = in_chinese(raised.value)
        assert text.startswith(name) and CHINESE.search(text), text


async def test_a_chinese_readers_table_says_why_a_row_failed_in_chinese(tmp_path: Path) -> None:
    from dataclasses import replace

    import pandas as pd

    from glm1m.errors import ServerBusy
    from glm1m.translation.fanout import Job
    from glm1m.translation.job import job_key, run_job

    (tmp_path / "in.csv").write_text("id,text\n1,row 1\n2,row 2\n", encoding="utf-8")
    busy = ServerBusy(key="server_busy", status=503)
    llm = ScriptedLlm(fail=lambda text: busy if text == "row 2" else None)
    job = Job("English", retries=0, lang=ZH)
    summary = await run_job(open_source(tmp_path / "in.csv"), job, llm, tmp_path / "out.csv")
    out = pd.read_csv(tmp_path / "out.csv", encoding="utf-8-sig", dtype=str, keep_default_na=False)
    assert summary.failed == 1 and out["translation_error"][1] == busy.in_language(ZH)
    assert "HTTP 503" in out["translation_error"][1] and CHINESE.search(out["translation_error"][1])
    # The same job whatever its reader's language: an English run resumes the rows a Chinese one did.
    source = open_source(tmp_path / "in.csv")
    assert job_key(source, job) == job_key(source, replace(job, lang="en"))


def test_rows_a_stopped_job_did_not_reach_say_so_in_the_readers_language(tmp_path: Path) -> None:
    import pandas as pd

    from glm1m.translation.checkpoint import Checkpoint
    from glm1m.translation.job import NOT_REACHED, assemble

    (tmp_path / "in.csv").write_text("id,text\n1,row 1\n", encoding="utf-8")
    for lang, name in (("en", "en.csv"), (ZH, "zh.csv")):
        assemble(open_source(tmp_path / "in.csv"), Checkpoint(tmp_path / f"{name}.ckpt", "job"),
                 tmp_path / name, "English", lang)
    said = [pd.read_csv(tmp_path / name, encoding="utf-8-sig", dtype=str, keep_default_na=False)
            ["translation_error"][0] for name in ("en.csv", "zh.csv")]
    assert said[0] == NOT_REACHED and said[1].startswith("未翻译") and "再次运行" in said[1]
