"""Looking things up (issue 28, item 2): the tools the app carries out on a set's text, and the turns
with the model (scripted: which calls it makes, what it reads back, when it must answer)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from glm1m.chat import close_now
from glm1m.documents.answer import OpenDocument, answer
from glm1m.documents.budget import Budget, Strategy
from glm1m.documents.lookup import FIND, READ, first_call, Limits, Lookup, carry_out, find, listed, look_up, read
from glm1m.documents.mapreduce import MapReduce
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.sets import DocumentSet
from glm1m.llm import ChatParams
from glm1m.tool_calls import Collected, ToolCall
from tests.support.scripted_llm import ScriptedLlm

LIMITS = Limits(calls=4, chars=2000)
PARAMS = ChatParams(temperature=0.0, max_tokens=500)
MANUAL = DocumentText("manual.pdf", (
    Page(1, "Installation: run the installer, then restart."),
    Page(2, "Configuration lives in /etc/tool.conf. The licence is GPL."),
    Page(3, "安装指南：先运行安装程序，然后重启电脑。"),
), 3)
NOTES = DocumentText("notes \"v2\".md", (
    Page(1, "Release notes", Kind.SECTION, heading="Notes"),
    Page(2, "The licence changed to MIT in version 2; the licence file moved.", Kind.SECTION),
), 2)
SET = DocumentSet((MANUAL, NOTES)).text()


def call(name: str, n: int = 0, **arguments: Any) -> ToolCall:
    return ToolCall(f"call-{name}-{n}", name, json.dumps(arguments))


def test_find_returns_the_locations_holding_most_words_best_first_with_their_markers() -> None:
    found = find(SET, "licence MIT", LIMITS)
    assert found.found == ("B § 2", "A p. 2")  # both words, twice "licence"; then one word
    assert found.result.startswith("[B § 2] …The licence changed to MIT")
    assert "[A p. 2] …" in found.result and "GPL" in found.result
    assert find(MANUAL, "重启电脑", LIMITS).found == ("p. 3",)  # Chinese, no spaces: one phrase
    # A phrase no page holds as written: its pairs of characters (安装, 电脑 are on p. 3).
    loose = find(MANUAL, "安装电脑", LIMITS)
    assert loose.found == ("p. 3",) and loose.result.startswith("[p. 3] …安装指南")
    nothing = find(SET, "kernel", LIMITS)
    assert nothing.found == () and "No location holds any of: kernel" in nothing.result


def test_read_takes_a_marker_as_written_and_says_what_is_wrong_otherwise() -> None:
    page = read(SET, "B § 2", LIMITS)
    assert page.found == ("B § 2",) and page.result == "[B § 2]\nThe licence changed to MIT in version " \
                                                       "2; the licence file moved."
    assert read(SET, "[A p. 3]", LIMITS).result.endswith("然后重启电脑。")
    assert read(MANUAL, "p. 2", LIMITS).result.startswith("[p. 2]\nConfiguration")
    assert read(MANUAL, "2", LIMITS).found == ("p. 2",)
    assert "Say which document: A, B" in read(SET, "p. 2", LIMITS).result
    missing = read(SET, "A p. 9", LIMITS)
    assert missing.found == () and "There is no A p. 9" in missing.result and "A pp. 1–3" in missing.result
    assert "is not a location" in read(SET, "the end", LIMITS).result


def test_the_model_is_told_each_documents_name_and_span_not_its_text() -> None:
    told = listed(SET).render("en")
    assert told == "- A manual.pdf: 3 pages (A pp. 1–3)\n- B notes \"v2\".md: 2 sections (B §§ 1–2)"
    assert "Configuration" not in told


def test_a_result_is_cut_at_the_limit_and_bad_arguments_get_a_sentence() -> None:
    cut = read(SET, "A p. 2", Limits(calls=1, chars=20))
    assert cut.result.startswith("[A p. 2]\nConfigur") and "[… cut at 20 characters]" in cut.result
    wrong = carry_out(SET, ToolCall("x", READ, "{not json"), LIMITS)
    assert wrong.found == () and f'{READ} with {{"location": "A p. 1"}}' in wrong.result
    assert carry_out(SET, ToolCall("y", "delete_everything", "{}"), LIMITS).found == ()


async def test_the_model_looks_up_reads_back_and_answers_citing_what_it_read() -> None:
    def turn(messages: list[dict[str, Any]], choice: str) -> list[ToolCall]:
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            return [call(FIND, words="licence")]
        if len(results) == 1:
            return [call(READ, 1, location="B § 2")]
        return []  # answers with text

    llm = ScriptedLlm(reply=lambda messages: "MIT since version 2 [B § 2].", turn=turn)
    seen: list[Lookup] = []

    async def on_lookup(lookup: Lookup) -> None:
        seen.append(lookup)

    text = "".join([p async for p in look_up(SET, "Which licence?", llm, PARAMS, LIMITS, on_lookup)])
    assert text == "MIT since version 2 [B § 2]."
    assert [(s.tool, s.asked) for s in seen] == [(FIND, "licence"), (READ, "B § 2")]
    assert llm.choices == ["auto", "auto", "auto"]
    # The first turn must look something up: held to one call in GLM-4's format, kept short.
    held = [c.params.extra for c in llm.calls]
    pattern = first_call(SET)
    assert held[0] == {"structured_outputs": {"regex": pattern}} and held[1:] == [None, None]
    assert llm.calls[0].params.max_tokens == 256
    assert re.fullmatch(pattern, 'find_passages\n{"words": "许可 licence"}')
    assert re.fullmatch(pattern, 'read_location\n{"location": "B § 12"}')
    assert not re.fullmatch(pattern, 'read_location\n{"location": "everything"}')
    assert not re.fullmatch(pattern, 'read_location\n{"location": "Q p. 1"}')  # no document Q
    assert re.fullmatch(first_call(MANUAL), 'read_location\n{"location": "p. 2"}')
    assert not re.fullmatch(first_call(MANUAL), 'read_location\n{"location": "A p. 2"}')  # one: no letter
    final = llm.calls[-1].messages
    assert final[0]["role"] == "system" and "Documents:\n- A manual.pdf" in final[1]["content"]
    assert "Configuration" not in final[1]["content"]  # the text only comes through the tools
    assert final[2]["tool_calls"][0]["function"]["name"] == FIND and final[3]["role"] == "tool"
    assert final[5]["tool_call_id"] == "call-read_location-1" and "version 2" in final[5]["content"]
    assert all(c.params.one_shot for c in llm.calls)  # nothing of it kept in the KV tier


async def test_words_written_before_a_lookup_end_a_paragraph_before_the_answer() -> None:
    # GLM-4 may write words, then `<|assistant|>` and a call, in one answer. The words stream as
    # they come (they say what the model is about to do); the answer after the lookup starts a
    # paragraph of its own, and the words go back stripped of GLM-4's empty first line, as the
    # parser's whole-answer parse gives them (the chat template writes that line again).
    def turn(messages: list[dict[str, Any]], choice: str) -> list[str | ToolCall]:
        results = [m for m in messages if m["role"] == "tool"]
        if not results:
            return [call(FIND, words="licence")]
        if len(results) == 1:
            return ["\nI will read", " B § 2.", call(READ, 1, location="B § 2")]
        return []

    llm = ScriptedLlm(reply=lambda messages: "\nMIT since version 2 [B § 2].", turn=turn)
    seen: list[Lookup] = []

    async def on_lookup(lookup: Lookup) -> None:
        seen.append(lookup)

    text = "".join([p async for p in look_up(SET, "Which licence?", llm, PARAMS, LIMITS, on_lookup)])
    assert text == "\nI will read B § 2.\n\nMIT since version 2 [B § 2]."
    assert [(s.tool, s.asked) for s in seen] == [(FIND, "licence"), (READ, "B § 2")]
    said = llm.calls[-1].messages[4]
    assert said["role"] == "assistant" and said["content"] == "I will read B § 2."
    assert said["tool_calls"][0]["function"]["name"] == READ


async def test_past_the_limit_the_model_must_answer_with_what_it_has() -> None:
    llm = ScriptedLlm(reply=lambda messages: "Done.",
                      turn=lambda messages, choice: [call(FIND, len(messages), words="licence")])
    seen: list[Lookup] = []

    async def on_lookup(lookup: Lookup) -> None:
        seen.append(lookup)

    text = "".join([p async for p in look_up(SET, "q", llm, PARAMS, Limits(calls=3, chars=500), on_lookup)])
    assert text == "Done." and len(seen) == 3
    assert llm.choices == ["auto", "auto", "auto", "none"]


async def test_the_look_up_strategy_answers_through_the_document_path_and_stops_with_it() -> None:
    budget = Budget(pages=5, tokens=900_000, chars=9, max_model_len=1_048_576, threshold=128_000)
    assert Strategy.LOOK_UP in budget.offered(1000)
    doc = OpenDocument(SET, budget, Strategy.LOOK_UP, MapReduce(1000, 1, 100), LIMITS)
    llm = ScriptedLlm(reply=lambda messages: "x" * 400, piece_chars=5,
                      turn=lambda messages, choice: [] if len(messages) > 2 else [call(READ, location="A p. 1")])
    pieces = answer(doc, "q", llm, PARAMS)
    first = await anext(pieces)
    assert first == "xxxxx"
    await close_now(pieces)  # the person stopped it
    assert llm.calls[-1].outcome == "cancelled"


def test_streamed_call_deltas_make_whole_calls_in_order() -> None:
    class Fn:
        def __init__(self, name: str | None, arguments: str | None) -> None:
            self.name, self.arguments = name, arguments

    class Delta:
        def __init__(self, index: int, id: str | None, name: str | None, arguments: str | None) -> None:
            self.index, self.id, self.function = index, id, Fn(name, arguments)

    collected = Collected()
    collected.add([Delta(0, "c0", FIND, ""), Delta(1, "c1", READ, '{"loc')])
    collected.add(None)
    collected.add([Delta(0, None, None, '{"words": "a"}'), Delta(1, None, None, 'ation": "p. 1"}')])
    assert collected.calls() == [ToolCall("c0", FIND, '{"words": "a"}'),
                                 ToolCall("c1", READ, '{"location": "p. 1"}')]


@pytest.mark.parametrize("unit", ["p. 4", "page 4", "[p. 4]", " 4 ", "p4", "pp. 4-5", "第4页", "(p. 4).", "§§ 4"])
def test_read_takes_the_ways_a_model_writes_a_page(unit: str) -> None:
    doc = DocumentText("x.pdf", tuple(Page(n, f"text {n}") for n in range(1, 6)), 5)
    assert read(doc, unit, LIMITS).result == "[p. 4]\ntext 4"


def test_ways_a_model_writes_a_location_in_a_set() -> None:
    for written in ("A p.3", "A, page 3", "A pp. 3–4", "A 第3页", "(A p. 3)", "[A p. 3]."):
        assert read(SET, written, LIMITS).found == ("A p. 3",), written
    assert "Say which document" in read(SET, "p 3", LIMITS).result  # "p" is no document's letter


def test_a_passage_holds_the_word_found_where_case_folding_changes_lengths() -> None:
    german = DocumentText("de.md", (Page(1, "Straße " * 200 + "Lizenz: MIT."),), 1)
    assert "Lizenz: MIT." in find(german, "lizenz", LIMITS).result  # "ß" folds to "ss"


def test_the_first_call_takes_no_control_character_and_one_location_is_said_singular() -> None:
    assert not re.fullmatch(first_call(SET), 'find_passages\n{"words": "a\tb"}')  # JSON refuses a raw tab
    one = DocumentText("one.pdf", (Page(1, "x"),), 1)
    assert listed(one).render("en") == "- one.pdf: 1 page (p. 1)"


def test_a_reopened_chat_looks_up_within_the_limits_set_now(tmp_path) -> None:
    from glm1m.documents.store import load_set, save

    budget = Budget(pages=5, tokens=900_000, chars=9, max_model_len=1_048_576, threshold=128_000)
    doc = OpenDocument(SET, budget, Strategy.LOOK_UP, MapReduce(1000, 1, 100), Limits(3, 500))
    save(doc, tmp_path / "document.json", DocumentSet((MANUAL, NOTES)))
    found = load_set(tmp_path / "document.json", Limits(5, 900))
    assert found is not None and found[1].strategy is Strategy.LOOK_UP and found[1].limits == Limits(5, 900)
