"""A document's translation as batch work, with the scripted model: DOCX paragraphs (body, table
cells) with their runs, a section the model fails on kept and marked, a second run that asks only
the unfinished sections, and a document too long for the served context read in windows."""

from __future__ import annotations

import asyncio
import re
import zipfile
from pathlib import Path

import pytest

from glm1m.doc_translation.job import DocJob, run_document
from glm1m.doc_translation.prompt import GLOSSARY_ASK
from glm1m.errors import ServerBusy
from glm1m.translation.job import checkpoint_path
from tests.support.documents import docx_with_body
from tests.support.scripted_llm import ScriptedLlm, user_text

ASK = GLOSSARY_ASK.split(",")[0]
BOLD = "<w:rPr><w:b/></w:rPr>"


def run(path: Path, llm: ScriptedLlm, out: Path, notes: list | None = None, **job: object):
    said = notes if notes is not None else []
    return asyncio.run(run_document(path, DocJob("German", **job), llm, out, on_note=said.append))


def paragraphs(path: Path) -> list[str]:
    """Each w:p's w:t texts, joined by "|" between w:t elements, in document order."""
    with zipfile.ZipFile(path) as z:
        xml = z.read("word/document.xml").decode()
    return ["|".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", p))
            for p in re.findall(r"<w:p>.*?</w:p>", xml)]


def test_docx_paragraphs_and_cells_go_in_their_first_run_and_mixed_runs_are_counted(tmp_path: Path) -> None:
    body = ('<w:p><w:r><w:t>Plain paragraph.</w:t></w:r></w:p>'
            f'<w:p><w:r><w:t xml:space="preserve">Mixed </w:t></w:r><w:r>{BOLD}<w:t>bold</w:t></w:r>'
            '<w:r><w:t xml:space="preserve"> end.</w:t></w:r></w:p>'
            '<w:p/>'
            '<w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell one</w:t></w:r></w:p></w:tc>'
            '<w:tc><w:p><w:r><w:t>cell &amp; two</w:t></w:r></w:p></w:tc></w:tr></w:tbl>')
    src = docx_with_body(tmp_path / "report.docx", body)
    out = tmp_path / "report.de.docx"
    summary = run(src, ScriptedLlm(), out)
    assert summary.total == 4 and summary.complete
    assert paragraphs(out) == ["PLAIN PARAGRAPH.", "MIXED BOLD END.||", "CELL ONE", "CELL &amp; TWO"]
    assert [(n.key, n.fields) for n in summary.notes] == [("doc_tr_docx_formatting", {"count": 1})]
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(out) as b:
        assert a.namelist() == b.namelist()
        assert a.read("_rels/.rels") == b.read("_rels/.rels")
        assert "<w:tbl><w:tr><w:tc>" in b.read("word/document.xml").decode()
        assert BOLD in b.read("word/document.xml").decode()  # the run and its properties stay


def test_a_failed_section_stays_in_the_original_marked_and_a_rerun_asks_only_it(tmp_path: Path) -> None:
    src = tmp_path / "doc.md"
    src.write_text("# Title\n\nFirst para.\n\nSecond para.\n\nThird para.\n", encoding="utf-8")
    out = tmp_path / "doc.de.md"
    broken = ScriptedLlm(fail=lambda text: ServerBusy(key="server_busy", status=503)
                         if text == "Second para." else None)
    first = run(src, broken, out, retries=0)
    assert (first.translated, first.failed, first.complete) == (3, 1, False)
    assert out.read_text(encoding="utf-8") == (
        "# TITLE\n\nFIRST PARA.\n\nSecond para. <!-- glm1m: not translated: "
        + ServerBusy(key="server_busy", status=503).in_language("en").replace("--", "- -")
        + " -->\n\nTHIRD PARA.\n")
    assert checkpoint_path(out).exists()
    again = ScriptedLlm()
    second = run(src, again, out)
    assert [c.text for c in again.calls] == ["Second para."]  # the glossary was written: not asked
    assert second.complete and second.resumed == 3
    assert out.read_text(encoding="utf-8") == "# TITLE\n\nFIRST PARA.\n\nSECOND PARA.\n\nTHIRD PARA.\n"
    assert not checkpoint_path(out).exists()


def test_a_stopped_run_writes_the_finished_sections_and_marks_the_rest(tmp_path: Path) -> None:
    src = tmp_path / "notes.txt"
    src.write_text("one\n\ntwo\n\nthree\n", encoding="utf-8")
    out = tmp_path / "notes.de.txt"

    async def stop_midway() -> None:
        llm = ScriptedLlm(hold=lambda text: text == "three")
        task = asyncio.create_task(run_document(src, DocJob("German", concurrency=1), llm, out))
        await llm.wait_finished(3)  # the glossary pass, "one", "two"
        await llm.wait_started(4)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(stop_midway())
    text = out.read_text(encoding="utf-8")
    assert text.startswith("ONE\n\nTWO\n\n⚠ glm1m: not translated: the job stopped before this section")
    assert text.endswith("\nthree\n")
    assert checkpoint_path(out).exists()


def test_a_document_past_the_served_context_is_read_in_windows(tmp_path: Path) -> None:
    src = tmp_path / "long.md"
    src.write_text("\n\n".join(f"Paragraph {n} " + "word " * 200 for n in range(12)) + "\n",
                   encoding="utf-8")
    out = tmp_path / "long.de.md"
    llm = ScriptedLlm(context=2048)  # about 260 tokens a paragraph: a window holds a few
    notes: list = []
    summary = run(src, llm, out, notes, max_tokens=256)
    assert summary.complete
    windows = [n for n in notes if n.key == "doc_tr_windows"]
    assert windows and windows[0].fields["count"] > 1
    asks = [c for c in llm.calls if user_text(c.messages).startswith(ASK)]
    assert len(asks) == windows[0].fields["count"]  # one glossary pass per window
    for call in llm.calls:
        assert llm.count(call.messages[1]["content"]) < 2048 - 256
        if not call.text.startswith(ASK):
            assert call.text in call.messages[1]["content"]  # each section inside its window


def test_context_tokens_cuts_a_document_that_fits_into_windows_and_says_so(tmp_path: Path) -> None:
    src = tmp_path / "long.md"
    src.write_text("\n\n".join(f"Paragraph {n} " + "word " * 200 for n in range(12)) + "\n",
                   encoding="utf-8")
    whole_llm, whole_notes = ScriptedLlm(context=100_000), []
    run(src, whole_llm, tmp_path / "whole.de.md", whole_notes, max_tokens=256)
    assert not [n for n in whole_notes if n.key.startswith("doc_tr_windows")]  # it fits: one part
    assert len({c.messages[1]["content"] for c in whole_llm.calls}) == 1

    llm, notes = ScriptedLlm(context=100_000), []
    summary = run(src, llm, tmp_path / "cut.de.md", notes, max_tokens=256, context_tokens=1000)
    assert summary.complete
    chosen = [n for n in notes if n.key == "doc_tr_windows_chosen"]
    assert chosen and chosen[0].fields == {"limit": 1000, "count": chosen[0].fields["count"]}
    assert chosen[0].fields["count"] > 1 and not [n for n in notes if n.key == "doc_tr_windows"]
    parts = {c.messages[1]["content"] for c in llm.calls}
    assert len(parts) == chosen[0].fields["count"]
    assert all(llm.count(part) <= 1000 for part in parts)
    for call in llm.calls:
        if not call.text.startswith(ASK):
            assert call.text in call.messages[1]["content"]  # each section inside its window


def test_by_default_a_long_document_goes_in_16k_windows_and_0_asks_for_the_whole(tmp_path: Path) -> None:
    """Measured (docs/benchmarks.md): the whole document beside every section took >= 9.5x the
    time of sections alone, 16K-token windows 1.51x; so windows are the default, whole is asked."""
    src = tmp_path / "long.md"
    src.write_text("\n\n".join(f"Paragraph {n} " + "word " * 200 for n in range(100)) + "\n",
                   encoding="utf-8")
    llm, notes = ScriptedLlm(context=100_000), []
    assert run(src, llm, tmp_path / "default.de.md", notes, max_tokens=256).complete
    said = [n for n in notes if n.key.startswith("doc_tr_windows")]
    assert [n.key for n in said] == ["doc_tr_windows_default"] and said[0].fields["limit"] == 16_384
    parts = {c.messages[1]["content"] for c in llm.calls}
    assert len(parts) == said[0].fields["count"] > 1
    assert all(llm.count(part) <= 16_384 for part in parts)

    whole_llm, whole_notes = ScriptedLlm(context=100_000), []
    assert run(src, whole_llm, tmp_path / "whole.de.md", whole_notes, max_tokens=256, context_tokens=0).complete
    assert not [n for n in whole_notes if n.key.startswith("doc_tr_windows")]
    assert len({c.messages[1]["content"] for c in whole_llm.calls}) == 1
    assert whole_llm.count(whole_llm.calls[0].messages[1]["content"]) > 16_384


def test_context_tokens_below_zero_or_for_a_table_is_one_sentence_and_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from glm1m.cli.main import main

    monkeypatch.setenv("GLM1M_LANG", "en")
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    (tmp_path / "a.md").write_text("Hello.\n", encoding="utf-8")
    (tmp_path / "t.csv").write_text("text\nhello\n", encoding="utf-8")
    for argv, words in ((["a.md", "--context-tokens", "-5"], "--context-tokens must be 0"),
                        (["t.csv", "--context-tokens", "4000"], "t.csv is a table")):
        with pytest.raises(SystemExit) as ended:
            main(["translate", *argv, "--to", "German", "--base-url", "http://127.0.0.1:9/v1"])
        assert ended.value.code == 2
        said = capsys.readouterr().err
        assert said.startswith("glm1m: ") and words in said and "Traceback" not in said, said


def test_the_windows_glossaries_are_asked_together_and_the_earlier_window_wins(tmp_path: Path) -> None:
    src = tmp_path / "long.md"
    src.write_text("\n\n".join(f"Paragraph {n} of the valve manual " + "word " * 200 for n in range(12))
                   + "\n", encoding="utf-8")

    def reply(messages) -> str:
        if not user_text(messages).startswith(ASK):
            return user_text(messages).upper()
        first = "Paragraph 0 " in messages[1]["content"]
        return '{"terms": [{"term": "valve", "translation": "%s"}]}' % ("Ventil" if first else "Klappe")

    async def scenario() -> tuple[object, int]:
        llm = ScriptedLlm(reply=reply, hold=lambda text: text.startswith(ASK))
        job = asyncio.create_task(run_document(src, DocJob("German", max_tokens=256, context_tokens=1000),
                                               llm, tmp_path / "long.de.md"))
        # Glossary requests of two windows in flight before any has answered: asked one after
        # another, only the first would ever start and this wait would time out.
        await asyncio.wait_for(llm.wait_started(2), 30)
        asked = sum(1 for c in llm.calls if c.text.startswith(ASK))
        llm.release_all()
        return await job, asked

    summary, asked = asyncio.run(scenario())
    assert asked >= 2
    assert summary.complete
    written = (tmp_path / "long.de.glossary.csv").read_text(encoding="utf-8")
    assert "Ventil" in written and "Klappe" not in written  # the first window's term, once
