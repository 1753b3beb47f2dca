"""Map-reduce on any served context, against the scripted client: dense parts are cut again until
they fit, notes too many for one prompt are combined in rounds, a part the server fails on is named
in the answer while the others are read, and a dead server or a question too long stops it with a
sentence."""

from __future__ import annotations

import pytest

from glm1m.documents.mapreduce import MapReduce, ask_map_reduce
from glm1m.documents.pages import DocumentText, Page
from glm1m.errors import DocumentError, ServerError, ServerUnavailable
from glm1m.llm import ChatParams
from glm1m.progress import Stage
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(20)
PARAMS = ChatParams(temperature=0.0, max_tokens=64)
PLAN = MapReduce(chunk_tokens=32_000, concurrency=4, note_tokens=48)


def pages(count: int, text: str) -> DocumentText:
    return DocumentText("manual.pdf", tuple(Page(n, text.format(n=n)) for n in range(1, count + 1)), count)


def is_note(call) -> bool:  # type: ignore[no-untyped-def]
    return "<part>" in call.text


def note_reply(messages) -> str:  # type: ignore[no-untyped-def]
    text = messages[-1]["content"]
    return f"note on ({text.split('(')[1].split(')')[0]})" if "<part>" in text else "The answer [p. 1]."


async def run(doc: DocumentText, llm: ScriptedLlm, question: str = "What does it say?",
              chars_per_token: float = 4.0, stages: list | None = None) -> str:
    record = stages.append if stages is not None else (lambda progress: None)
    return "".join([p async for p in ask_map_reduce(doc, chars_per_token, PLAN, question, llm, PARAMS,
                                                    record)])


async def test_parts_denser_than_the_average_are_cut_again_until_every_prompt_fits() -> None:
    # Pages 5-8 are dense (4 tokens a character, like CJK in a tokenizer that splits it): sized by
    # the average, their parts overflow the 2,048-token context.
    doc = DocumentText("manual.pdf", tuple(
        Page(n, ("word " * 300) if n not in (5, 6, 7, 8) else ("龘" * 300)) for n in range(1, 13)), 12)
    llm = ScriptedLlm(context=2048, reply=note_reply,
                      count=lambda t: len(t) // 4 + 1 + 4 * t.count("龘"))
    answer = await run(doc, llm, chars_per_token=3.5)
    assert answer == "The answer [p. 1]."
    notes = [c for c in llm.calls if is_note(c)]
    assert len(notes) > 4
    for call in notes:
        prompt = sum(llm.count(m["content"]) + llm.chat_overhead for m in call.messages)
        assert prompt + PLAN.note_tokens <= 2048  # prompt and notes fit the served context
    read = "".join(c.text.split("<part>\n")[1].split("\n</part>")[0] for c in notes)
    assert read.count("龘") == 4 * 300  # every dense character was read, none lost in a cut


async def test_notes_that_do_not_fit_one_prompt_are_combined_in_rounds() -> None:
    llm = ScriptedLlm(context=1024, reply=lambda m: ("n " * 90) if "<part>" in m[-1]["content"] else
                      ("shorter " * 20 if "Combine these notes" in m[-1]["content"] else "Done [p. 2]."))
    stages: list = []
    answer = await run(pages(300, "Page {n} says something plain. " * 20), llm, stages=stages)
    assert answer == "Done [p. 2]."
    combining = [c for c in llm.calls if "Combine these notes" in c.text]
    assert combining, "dozens of ~50-token notes cannot fit one 1,024-token prompt"
    final = llm.calls[-1]
    assert final.kind == "stream" and "From these notes, answer" in final.text
    assert sum(llm.count(m["content"]) for m in final.messages) + PARAMS.max_tokens <= 1024
    assert any(p.stage is Stage.COMBINING_ROUND and p.round >= 1 for p in stages)


async def test_a_part_the_server_fails_on_is_named_after_the_answer_and_the_rest_is_read() -> None:
    llm = ScriptedLlm(context=2048, reply=note_reply,
                      fail=lambda text: ServerError("The model server refused the request (HTTP 500).")
                      if "<part>" in text and "Page 7 " in text else None)
    doc = pages(12, "Page {n} is about its own subject. " * 40)
    stages: list = []
    answer = await run(doc, llm, stages=stages)
    failed = [c for c in llm.calls if is_note(c) and "Page 7 " in c.text]
    assert len(failed) == 2  # retried once, then reported
    part = failed[0].text.split("This is one part (")[1].split(")")[0]  # e.g. "pp. 6–10"
    assert answer.startswith("The answer [p. 1].") and f"(Not read: {part} —" in answer
    assert len([c for c in llm.calls if is_note(c)]) > 2  # the other parts were read
    reading = [p for p in stages if p.stage is Stage.READING]
    assert reading[-1].done == reading[-1].total and reading[-1].failed == 1


async def test_a_server_that_cannot_be_reached_stops_the_answer_with_its_sentence() -> None:
    llm = ScriptedLlm(context=2048, reply=note_reply,
                      fail=lambda text: ServerUnavailable("The model server is not answering.")
                      if "<part>" in text else None)
    with pytest.raises(ServerUnavailable, match="not answering"):
        await run(pages(12, "Page {n} text. " * 60), llm)
    assert len([c for c in llm.calls if is_note(c)]) <= PLAN.concurrency  # no retry storm


async def test_a_question_longer_than_the_context_allows_gets_a_sentence_and_sends_nothing() -> None:
    llm = ScriptedLlm(context=1024, reply=note_reply)
    with pytest.raises(DocumentError, match="Ask a shorter question"):
        await run(pages(3, "Page {n}."), llm, question="why " * 1000)
    assert llm.calls == []
