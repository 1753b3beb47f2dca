"""`glm1m translate FILE` for documents on the real demo server (served context 8,192; the demo
model writes noise): psmisc's README.md, and a DOCX made at test time from util-linux's col.txt
manual. Structure, counts, exit codes and the checkpoint are asserted, never words."""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from glm1m.documents.formats import read_document
from glm1m.translation.job import checkpoint_path
from tests.integration.test_summarize_set import glm1m
from tests.support.documents import docx_with_body

pytestmark = pytest.mark.server
README = Path("/usr/share/doc/psmisc/README.md")
COL = Path("/usr/share/doc/util-linux/col.txt")
SUMMARY = re.compile(r"(\d+) of (\d+) sections translated")


def translate(path: Path, out: Path, base_url: str, tmp_path: Path):
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data")}
    done = glm1m("translate", str(path), "--to", "French", "-o", str(out), "--max-tokens", "24",
                 "--concurrency", "8", "--base-url", base_url, env=env)
    assert done.returncode in (0, 1), done.stderr  # 1: a section marked (the demo writes noise)
    found = SUMMARY.search(done.stderr)
    assert found, done.stderr
    assert "term uses translated as the glossary says" in done.stderr
    assert (done.returncode == 1) == checkpoint_path(out).exists()
    return done, int(found.group(1)), int(found.group(2))


def test_a_real_markdown_manual_keeps_its_blank_lines_markers_and_links(model_server, tmp_path: Path) -> None:
    assert README.is_file(), "`make system-tools` installs psmisc"
    out = tmp_path / "README.fr.md"
    done, translated, total = translate(README, out, model_server.base_url, tmp_path)
    source, result = README.read_text(encoding="utf-8"), out.read_text(encoding="utf-8")
    assert total > 10
    assert source.count("\n\n") == result.count("\n\n")  # every blank line, in place
    assert heads(source) == heads(result)
    targets = re.compile(r"\]\(([^)]*)\)")
    assert targets.findall(source) == targets.findall(result)  # translated or marked: kept
    assert result.count("<!-- glm1m: not translated:") == total - translated
    assert (tmp_path / "README.fr.glossary.csv").read_text(encoding="utf-8").startswith("term,translation")
    if done.returncode == 1:  # a rerun asks only what failed, and reads the glossary back
        again, _, _ = translate(README, out, model_server.base_url, tmp_path)
        assert f"({translated:,} by an earlier run" in again.stderr, again.stderr
        assert "is read again" in again.stderr


def heads(text: str) -> list[str]:
    return [line.split(" ")[0] for line in text.splitlines() if line.startswith("#")]


def test_a_docx_made_from_a_real_manual_keeps_every_paragraph_and_cell(model_server, tmp_path: Path) -> None:
    assert COL.is_file(), "`make system-tools` installs util-linux"
    paragraphs = [" ".join(block.split()) for block in COL.read_text(encoding="utf-8").split("\n\n")]
    paragraphs = [p for p in paragraphs if p][:16]
    body = "".join(f'<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>{escape(p[:1])}</w:t></w:r>'
                   f'<w:r><w:t xml:space="preserve">{escape(p[1:])}</w:t></w:r></w:p>' for p in paragraphs)
    body += ('<w:tbl><w:tr><w:tc><w:p><w:r><w:t>col</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r>'
             '<w:t>filter reverse line feeds from input</w:t></w:r></w:p></w:tc></w:tr></w:tbl>')
    src = docx_with_body(tmp_path / "col.docx", body)
    out = tmp_path / "col.fr.docx"
    done, translated, total = translate(src, out, model_server.base_url, tmp_path)
    assert total == len(paragraphs) + 2
    with zipfile.ZipFile(out) as z:
        xml = z.read("word/document.xml").decode("utf-8")
    assert xml.count("<w:p>") == total and xml.count("<w:tc>") == 2 and xml.count("<w:b/>") == len(paragraphs)
    assert xml.count("⚠ glm1m: not translated:") == total - translated
    if translated:
        assert "paragraphs lost inline formatting (bold/italic inside a paragraph)" in done.stderr \
            or "paragraph lost inline formatting" in done.stderr
    assert len(read_document(out).pages) >= 1  # MuPDF opens what was written
