"""What the command line says to a person follows the locale (GLM1M_LANG, else LANG): its errors,
its waiting and budget lines, a translation's first line, all in Chinese for a Chinese user and
byte for byte the English of before for everyone else. The data on stdout does not change."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from glm1m.catalog import EN, ZH
from glm1m.cli import waiting
from glm1m.cli.summarize import read_said
from glm1m.cli.translate import stopped_line
from glm1m.documents.asking import Asked
from glm1m.documents.budget import Budget, Strategy, budget_said
from glm1m.documents.pages import DocumentText, Page
from glm1m.serving import PrefillClock, Served
from glm1m.translation.job import checkpoint_path

LOCALE = ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE", "GLM1M_LANG")


def glm1m(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own, with only the locale it is given."""
    clean = {k: v for k, v in os.environ.items() if k not in LOCALE and not k.startswith("GLM1M_")}
    return subprocess.run([sys.executable, "-m", "glm1m.cli", *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={**clean, **env})


def test_a_missing_file_is_said_in_the_users_language(tmp_path: Path) -> None:
    chinese = glm1m(tmp_path, "extract", "/missing.pdf", GLM1M_LANG="zh")
    assert (chinese.returncode, chinese.stdout) == (2, "")
    assert chinese.stderr == "glm1m: /missing.pdf 不是可读取的文件（请检查路径）。\n"
    locale = glm1m(tmp_path, "extract", "/missing.pdf", LANG="zh_CN.UTF-8")
    assert locale.stderr == chinese.stderr and locale.returncode == 2
    english = glm1m(tmp_path, "extract", "/missing.pdf", LANG="en_US.UTF-8")
    assert english.returncode == 2
    assert english.stderr == "glm1m: /missing.pdf is not a file that can be read (check the path).\n"


def test_a_bad_setting_is_said_in_the_users_language_though_the_settings_cannot_be_read(
        tmp_path: Path) -> None:
    chinese = glm1m(tmp_path, "extract", "x.pdf", GLM1M_LANG="zh", GLM1M_MAP_CONCURRENCY="0")
    assert (chinese.returncode, chinese.stdout) == (2, "")
    assert chinese.stderr == ("glm1m: GLM1M_MAP_CONCURRENCY 的值是 '0'，但它必须是至少为 1 的整数："
                              "请修正，或取消设置以使用默认值（8）。\n")
    option = glm1m(tmp_path, "summarize", "--max-tokens", "0", "x.pdf", LANG="zh_CN.UTF-8")
    assert option.returncode == 2
    assert option.stderr == "glm1m: --max-tokens 0 无法使用：它必须是至少为 1 的整数。\n"
    english = glm1m(tmp_path, "summarize", "--max-tokens", "0", "x.pdf", LANG="C.UTF-8")
    assert english.stderr == "glm1m: --max-tokens 0 is not usable: it must be a whole number of at least 1.\n"


def test_a_plan_that_does_not_fit_says_why_in_chinese(tmp_path: Path) -> None:
    chinese = glm1m(tmp_path, "plan", "--gpu-mem", "8", GLM1M_LANG="zh")
    assert chinese.returncode == 2
    assert chinese.stderr.startswith("glm1m: 一块 8 GiB GPU（8.0 GiB）放不下 GLM-4-9B-Chat-1M：")
    assert "已没有留给 KV 缓存的空间。" in chinese.stderr
    english = glm1m(tmp_path, "plan", "--gpu-mem", "8", GLM1M_LANG="en")
    assert english.stderr.startswith("glm1m: GLM-4-9B-Chat-1M does not fit on one 8 GiB GPU "
                                     "(8.0 GiB): at utilisation 0.92 vLLM gets")


def test_a_translation_says_what_it_reads_and_why_it_cannot_start_in_chinese(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("id;text\n1;hello\n", encoding="utf-8")
    server = {"GLM1M_BASE_URL": "http://127.0.0.1:9/v1", "GLM1M_RETRIES": "0"}  # nothing listens
    chinese = glm1m(tmp_path, "translate", "a.csv", "--to", "English", GLM1M_LANG="zh", **server)
    assert chinese.returncode == 2
    assert chinese.stderr.splitlines() == [
        "glm1m: 读取 a.csv（UTF-8）；分号分隔；翻译列 'text'，译成 English → a.translated.csv",
        "glm1m: 模型服务器（http://127.0.0.1:9/v1）没有响应。请用 `make run` 或 `glm1m serve` 启动它"
        "（或等它启动完毕），然后重新发送消息。"]
    english = glm1m(tmp_path, "translate", "a.csv", "--to", "English", LANG="C.UTF-8", **server)
    assert english.stderr.splitlines()[0] == ("glm1m: reading a.csv as UTF-8 (semicolon-separated); "
                                              "translating column 'text' into English → a.translated.csv")


def h200() -> PrefillClock:
    return PrefillClock(Served(model="m", gpu="NVIDIA H200", gpus=1, tensor_parallel=1, layout="data",
                               profile="auto", max_model_len=1_048_576))


def opened(tokens: int) -> SimpleNamespace:
    """What summarize asks, as far as its door looks at it."""
    text = DocumentText("A.txt", (Page(1, "words"),), 1)
    budget = Budget(pages=1, tokens=tokens, chars=5, max_model_len=1_048_576, threshold=tokens)
    return SimpleNamespace(name="A.txt", text=text, budget=budget, strategy=Strategy.WHOLE)


@pytest.fixture
def chinese(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in LOCALE:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GLM1M_LANG", "zh")
    monkeypatch.chdir(tmp_path)  # no .env of the checkout


@pytest.mark.usefixtures("chinese")
async def test_summarize_says_its_budget_its_wait_and_the_shelf_in_chinese(
        capsys: pytest.CaptureFixture[str]) -> None:
    doc = opened(1_000_000)
    door = waiting.TerminalDoor(None, h200(), every_s=60.0, terminal=False)
    shelved = SimpleNamespace(hit=True, text=doc.text, added=0.0)
    await door.read(shelved, None)  # type: ignore[arg-type]
    waiting.say(read_said(doc.name, budget_said(doc.budget), doc.strategy))
    asked = Asked(doc, first=True, before=None)  # type: ignore[arg-type]
    await door.asking(asked)
    await door.waiting(asked, 150.0)
    door.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "glm1m: A.txt：自 ? 起已在文档架上，不再重复读取。"
    assert lines[1] == ("glm1m: A.txt：1 页，1,000,000 个词元——占所部署 1,048,576 词元上下文的 95.4%。"
                        "读取方式：整篇。")
    assert lines[2].startswith("glm1m: 到回答开始前：约 ") and "分钟（按一块 H200估计）；模型要先读完全部 " \
        "1,000,000 个词元" in lines[2]
    assert lines[3].startswith("glm1m: 仍在读取 A.txt（1,000,000 个词元）：已用 2:30，约剩 ")
    assert lines[3].endswith("（按一块 H200估计）。") and len(lines) == 4


def test_the_budget_and_wait_lines_stay_the_english_they_were() -> None:
    doc = opened(1_000_000)
    assert read_said(doc.name, budget_said(doc.budget), doc.strategy).render(EN) == (
        "A.txt: 1 page, 1,000,000 tokens — 95.4% of the served 1,048,576-token context. Strategy: whole.")
    clock = h200()
    assert clock.describe_wait(1_000_000).startswith("Until the first answer starts: about ")
    assert "minutes (an estimate for one H200); the model reads all 1,000,000 tokens first" in \
        clock.describe_wait(1_000_000)
    assert clock.describe_wait(20_000, "2026-12-01 23:40", a_set=True, lang=ZH).startswith(
        "此服务器之前读过这组文档（2026-12-01 23:40）：如果它仍保留着，回答几秒内就会开始；")
    line = waiting.waiting_line("A.txt", 1_000, 600.0, clock, read_before=True, lang=ZH)
    assert line.startswith("再次询问 A.txt（1,000 个词元）：已用 10:00；")
    assert "已超过按一块 H200估计的" in line


def test_a_stopped_translation_says_where_its_rows_are_in_either_language(tmp_path: Path) -> None:
    output = tmp_path / "out.csv"
    output.write_text("id,text,translation,translation_error\n1,a,,not translated\n", encoding="utf-8")
    checkpoint_path(output).write_text("", encoding="utf-8")
    assert stopped_line(output) == (f"stopped. Finished rows are in {output}; run the same command "
                                    f"again to continue.")
    assert stopped_line(output, lang=ZH) == f"已停止。已完成的行在 {output} 中；再次运行同一命令即可继续。"
