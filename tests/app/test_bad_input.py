"""Every bad file in one chat session: each gets one clear sentence or a correct result, the app
stays up, and the conversation before them is still there afterwards."""

from __future__ import annotations

import csv
import io

import httpx
import pytest

from tests.support import corpus
from tests.support.chainlit_client import ChainlitSession

pytestmark = pytest.mark.app
csv.field_size_limit(1 << 30)  # the 10 MB cell comes back whole in the output CSV
TRACE_MARKS = ("Traceback", "Exception", "Error:", 'File "', "errno")


async def upload_named(chat: ChainlitSession, case: corpus.Case) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.post(f"{chat.url}/project/file", params={"session_id": chat.session_id},
                               files={"file": (case.name, case.data, case.mime)}, timeout=60)


def is_sentence(text: str) -> bool:
    return text.strip().endswith((".", "。")) and not any(mark in text for mark in TRACE_MARKS)


async def outcome(chat: ChainlitSession, case: corpus.Case) -> tuple[list[str], dict | None]:
    """Send the file; return the error messages shown and the CSV file element, if any. A file
    refused at upload shows the reply's sentence (the page shows it beside the paperclip)."""
    reply = await upload_named(chat, case)
    if reply.status_code == 400:
        return [reply.json()["detail"]], None
    reply.raise_for_status()
    ref = {"id": reply.json()["id"]}
    question = "What does it say?" if case.kind == "pdf" else ""
    start = chat.mark()
    await chat.send(question, file_refs=[ref])
    done = await chat.wait_for(
        lambda e: (e.name == "new_message" and e.data.get("isError"))
        or (e.name == "element" and e.data.get("name", "").endswith(".translated.csv")), 300, start)
    await chat.wait_for(lambda e: e.name == "task_end", 120, chat.index(done))
    errors = [m["output"] for m in chat.messages(start) if m.get("isError")]
    return errors, done.data if done.name == "element" else None


async def test_every_bad_input_gets_a_sentence_or_a_result_and_nothing_is_lost(
        app, chat: ChainlitSession, tmp_path, data_dir) -> None:
    await chat.change_settings({"system_prompt": "", "temperature": 1.0, "max_tokens": 8})
    start = await chat.ask("first question")
    first_answer = chat.answers(start)[-1]["output"]
    cases = corpus.pdf_cases(tmp_path) + corpus.csv_cases() + corpus.name_cases()
    seen = {}
    for case in cases:
        errors, element = await outcome(chat, case)
        seen[case.what] = errors
        if case.expect == "error":
            assert len(errors) == 1 and is_sentence(errors[0]), (case.what, errors)
            assert any(phrase in errors[0] for phrase in case.says), (case.what, errors)
            continue
        assert element is not None and not errors, (case.what, errors)
        assert element["name"] == (case.output or case.name[:-4] + ".translated.csv"), case.what
        rows = list(csv.DictReader(io.StringIO((await chat.download(element)).decode("utf-8-sig"))))
        assert tuple(r["text"] for r in rows) == case.texts, case.what  # decoded, whole, in order
        # Every row is back: translated, marked failed with the reason, or empty (passed through).
        assert all(r["translation"] or r["translation_error"] or not r["text"].strip()
                   for r in rows), case.what
    # Whatever the browser called a file, outputs stay in translations/<thread>/<job>/ (any test
    # app's data dir lies under the same log folder).
    outputs = list(data_dir.parent.rglob("*.translated.csv"))
    assert outputs and all(p.parent.parent.parent.name == "translations" for p in outputs), outputs
    assert httpx.get(app.url, timeout=10).status_code == 200  # the app is still up

    app.proxy.reset()
    start = await chat.ask("second question")
    assert chat.answers(start)
    sent = app.proxy.journal[-1][0]["messages"]
    # Exactly the conversation: no status line or error from the bad files became a turn.
    assert [m for m in sent if m["role"] != "system"] == [
        {"role": "user", "content": "first question"}, {"role": "assistant", "content": first_answer},
        {"role": "user", "content": "second question"}]
