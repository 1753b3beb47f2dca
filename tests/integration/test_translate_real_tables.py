"""`glm1m translate` on tables shaped as real ones are, through the real vLLM demo server: a GB18030
file from Chinese Excel with four-byte characters, ';'-separated, a title above its header, an
empty header cell and a short row; and a file with a row longer than its header, refused before
any row is sent."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.service import Service

pytestmark = pytest.mark.server

ROWS = [["编号", "句子", ""], ["1", "梯度算子∇作用于标量场；得到向量场。", "a"],
        ["2", "内积⟨u, v⟩满足对称性与线性。", "b"], ["3", "本节讨论2019–2023年的数据。", "c"],
        ["4", "合同自签署之日起生效", ""]]


def translate(args: list[str], log_dir: Path, name: str) -> Service:
    return Service(name, [sys.executable, "-m", "glm1m.cli", "translate", *args],
                   ready=r"translating column|row \d+ has", log_dir=log_dir, cwd=str(ROOT))


def test_a_gb18030_semicolon_table_with_a_title_comes_back_whole(tmp_path, healthy_proxy) -> None:
    text = io.StringIO(newline="")
    csv.writer(text, delimiter=";").writerows(ROWS)
    body = text.getvalue().replace("合同自签署之日起生效;\r\n", "合同自签署之日起生效\r\n")  # a short row
    (tmp_path / "in.csv").write_bytes(("季度报告\r\n" + body).encode("gb18030"))
    out = tmp_path / "out.csv"
    run = translate([str(tmp_path / "in.csv"), "--to", "en", "--column", "句子", "--max-tokens", "4",
                     "-o", str(out), "--base-url", f"{healthy_proxy.url}/v1"], tmp_path, "gb18030")
    try:
        assert run.wait_exit(300) == 0, run.output()
    finally:
        run.stop()
    said = run.output()
    assert "GB18030" in said and "semicolon-separated" in said and "the header is row 2" in said
    with out.open(encoding="utf-8-sig", newline="") as f:
        written = list(csv.reader(f))
    assert written[0] == ["季度报告"]  # the title stays a line of its own (issue 33, item 4)
    assert written[1] == ROWS[0] + ["translation", "translation_error"]
    assert [r[:3] for r in written[2:]] == ROWS[1:]  # every cell, in order, the short row's too
    assert all(r[3] and not r[4] for r in written[2:])
    assert sorted(healthy_proxy.answers_by_prompt()) == sorted(r[1] for r in ROWS[1:])


def test_a_row_longer_than_its_header_is_refused_before_any_row_is_sent(tmp_path, healthy_proxy) -> None:
    (tmp_path / "in.csv").write_text("id,text,note\n1,hello,a\n2,world,b,extra\n", encoding="utf-8")
    before = healthy_proxy.requests_seen
    run = translate([str(tmp_path / "in.csv"), "--to", "en", "-o", str(tmp_path / "out.csv"),
                     "--base-url", f"{healthy_proxy.url}/v1"], tmp_path, "long-row")
    try:
        assert run.wait_exit(60) == 2
    finally:
        run.stop()
    said = run.output()
    assert "in.csv row 3 has 4 fields but its header (row 1) has 3" in said and "Traceback" not in said
    assert not (tmp_path / "out.csv").exists() and healthy_proxy.requests_seen == before
