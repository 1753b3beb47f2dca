"""Chainlit handlers: they only route and report; the work is in the plain modules beside them.

Start with `make run`, or `chainlit run chainlit_app/app.py` with a model server already up.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import chainlit as cl
import chainlit.server
from chainlit.input_widget import Select, Slider, TextInput

from chainlit_app.batch import Summary, job_key, run_job
from chainlit_app.table import CsvSource, open_source, read_glossary
from chainlit_app.translate import Job
from chainlit_app.uploads import folder_name, output_stem, sort_uploads

from chainlit_app import documents, history, metrics
from chainlit_app.accounts import Accounts, ensure_auth_secret
from chainlit_app.storage import LocalStorage, file_router, mount_first
from chainlit_app.upload_guard import empty_upload_guard
from chainlit_app.pdf import PdfLimits, PdfText, extract
from chainlit_app.conversation import CHAT_TURN, Conversation, from_thread
from chainlit_app.errors import UserFacingError
from chainlit_app.llm import ChatParams, Llm
from chainlit_app.pacing import coalesce
from chainlit_app.settings import get_settings

DEMO_BANNER = (
    "**Demo mode.** The model server runs a tiny model with *random weights*: its answers are "
    "noise. Everything else — streaming, stop, documents, translation — works as with the real "
    "GLM-4-9B-Chat-1M. Serve the real model on a GPU to get real answers (see the README)."
)

LANGUAGES = ["English", "简体中文", "繁體中文", "日本語", "한국어", "Français", "Deutsch", "Español"]
AUTO_SOURCE = "(detect)"
UNSUPPORTED = ("glm1m reads CSV files (to translate a column) and PDF files (to summarise or ask "
               "about them). Attach one of those, or type a question.")
PROGRESS_UPDATE_S = 0.5
KEEP_ALIVE_S = 5.0
PASSAGE_CHARS = 1500

_llm: Llm | None = None


def llm() -> Llm:
    global _llm
    if _llm is None:
        _llm = Llm(get_settings())
    return _llm


def open_accounts_and_history():
    """With login on: users, the session-signing secret, the history database and the file store.
    A problem with any of them stops the app here with one sentence, before anyone can lose work."""
    settings = get_settings()
    try:
        accounts = Accounts.from_settings(settings)
        accounts.require_users()
        os.environ["CHAINLIT_AUTH_SECRET"] = ensure_auth_secret(settings.data_dir)
        storage = LocalStorage(settings.data_dir / "files")
        data = history.open_history(settings, storage)
    except UserFacingError as error:
        print(f"glm1m: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as error:  # a data dir this user cannot create or write
        print(f"glm1m: cannot use {error.filename or settings.data_dir} ({error.strerror}); give "
              f"GLM1M_DATA_DIR a folder this user can write.", file=sys.stderr)
        raise SystemExit(2) from None
    mount_first(chainlit.server.app, file_router(storage, data.file_owner))
    return accounts, data


mount_first(chainlit.server.app, empty_upload_guard())
if get_settings().auth_required:
    _accounts, _history = open_accounts_and_history()

    @cl.data_layer
    def data_layer() -> history.HistoryDataLayer:
        return _history

    @cl.password_auth_callback
    async def login(username: str, password: str) -> cl.User | None:
        # scrypt takes ~0.1 s on purpose: off the event loop, so other sessions keep streaming.
        if await asyncio.to_thread(_accounts.verify, username, password):
            return cl.User(identifier=username, metadata={"provider": "password"})
        return None

    @cl.on_chat_resume
    async def on_chat_resume(thread: dict) -> None:
        await start_session(from_thread(get_settings().system_prompt, thread.get("steps") or []),
                            greet=False)


@cl.on_chat_start
async def on_chat_start() -> None:
    await start_session(Conversation(get_settings().system_prompt))


async def start_session(conversation: Conversation, greet: bool = True) -> None:
    settings = get_settings()
    metrics.serve(settings.metrics_port)
    cl.user_session.set("conversation", conversation)
    cl.user_session.set("params", ChatParams(settings.temperature, settings.max_tokens))
    await cl.ChatSettings([
        TextInput(id="system_prompt", label="System prompt", initial=settings.system_prompt,
                  multiline=True),
        Slider(id="temperature", label="Temperature", initial=settings.temperature,
               min=0, max=2, step=0.1),
        Slider(id="max_tokens", label="Max new tokens", initial=settings.max_tokens,
               min=16, max=8192, step=16),
        Select(id="target_language", label="Translate CSV files into", values=LANGUAGES,
               initial_value=LANGUAGES[0]),
        Select(id="source_language", label="CSV source language", values=[AUTO_SOURCE, *LANGUAGES],
               initial_value=AUTO_SOURCE),
    ]).send()
    cl.user_session.set("target_language", LANGUAGES[0])
    cl.user_session.set("source_language", None)
    if settings.demo and greet:  # a resumed thread shows the banner it got when it began
        await cl.Message(content=DEMO_BANNER, author="glm1m").send()
    await report_server_state()


@cl.on_settings_update
async def on_settings_update(values: dict) -> None:
    conversation: Conversation = cl.user_session.get("conversation")
    conversation.system_prompt = values["system_prompt"]
    params: ChatParams = cl.user_session.get("params")
    cl.user_session.set("params", replace(
        params, temperature=float(values["temperature"]), max_tokens=int(values["max_tokens"])))
    cl.user_session.set("target_language", values.get("target_language") or LANGUAGES[0])
    source = values.get("source_language")
    cl.user_session.set("source_language", None if source in (None, AUTO_SOURCE) else source)


@cl.on_message
async def on_message(message: cl.Message) -> None:
    uploads = sort_uploads(message.elements or [])
    if uploads.csv:
        glossary = (Path(uploads.glossary[0].path), uploads.glossary[0].name) if uploads.glossary else None
        await run_translation(Path(uploads.csv[0].path), uploads.csv[0].name, glossary)
    elif uploads.pdf:
        await run_document(Path(uploads.pdf[0].path), uploads.pdf[0].name, message.content)
    elif uploads.other and not message.content.strip():
        await cl.ErrorMessage(content=UNSUPPORTED, author="glm1m").send()
    elif cl.user_session.get("document") is not None:
        await ask_document(message.content)
    else:
        await run_chat(message.content)


async def report_server_state() -> None:
    """Say at once when the model server is not up, instead of at the first question."""
    try:
        await llm().max_model_len(refresh=True)
    except UserFacingError as error:
        await show_error(error)


async def run_chat(text: str) -> None:
    conversation: Conversation = cl.user_session.get("conversation")
    answer = cl.Message(content="", metadata={CHAT_TURN: True})  # marks it for from_thread
    try:
        pieces = conversation.reply(text, llm(), cl.user_session.get("params"))
        async for piece in coalesce(pieces, get_settings().stream_flush_s):
            await answer.stream_token(piece)
    except UserFacingError as error:
        await finish(answer)
        await show_error(error)
        return
    except asyncio.CancelledError:
        # The stop button cancels this task; keep what was shown before re-raising.
        await finish(answer)
        raise
    await finish(answer)


async def finish(answer: cl.Message) -> None:
    if answer.content:
        metrics.CHAT_ANSWERS.inc()
        await answer.send()


async def show_error(error: UserFacingError) -> None:
    metrics.failure(error)
    await cl.ErrorMessage(content=str(error), author="glm1m").send()


async def run_translation(path: Path, name: str, glossary_file: tuple[Path, str] | None = None) -> None:
    try:
        source = open_source(path, name=name)
        glossary = read_glossary(*glossary_file) if glossary_file else ()
    except UserFacingError as error:
        await show_error(error)
        return
    source = await choose_column(source)
    settings = get_settings()
    job = Job(target_language=cl.user_session.get("target_language") or LANGUAGES[0],
              source_language=cl.user_session.get("source_language"), glossary=glossary,
              concurrency=settings.translate_concurrency, max_tokens=settings.translate_max_tokens)
    # One folder per job: the same file and settings again resume it, anything else (another
    # file of the same name, another language) starts its own instead of clashing.
    key = await asyncio.to_thread(job_key, source, job)  # reads the whole file
    folder = translation_dir() / key[:16]
    folder.mkdir(exist_ok=True)
    output = folder / f"{output_stem(name)}.translated.csv"
    status = cl.Message(content=f"Reading **{name}** as {source.encoding_name}; translating column "
                                f"**{source.column}** into {job.target_language}"
                                f"{f' with {len(glossary)} glossary terms' if glossary else ''} …",
                    author="glm1m")
    await status.send()
    try:
        summary = await run_job(source, job, llm(), output, progress_reporter(status), key)
    except UserFacingError as error:
        await show_error(error)
        return
    except asyncio.CancelledError:
        # Stop: run_job has written the finished rows; hand them over before ending.
        await send_result(output, None)
        raise
    await send_result(output, summary)


async def choose_column(source: CsvSource) -> CsvSource:
    if len(source.columns) < 2:
        return source
    ordered = [source.column] + [c for c in source.columns if c != source.column]
    answer = await cl.AskActionMessage(
        content="Which column should be translated?", author="glm1m", timeout=300,
        actions=[cl.Action(name="column", payload={"column": c}, label=c) for c in ordered],
    ).send()
    column = answer["payload"]["column"] if answer else source.column
    return replace(source, column=column)


def translation_dir() -> Path:
    # By thread, not by connection: a resumed thread (after a restart, too) finds the checkpoint
    # of a batch that was cut short, and attaching the same file again resumes it.
    folder = get_settings().data_dir / "translations" / folder_name(cl.context.session.thread_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def status_writer(status: cl.Message):
    """Progress arrives per row or page; the page gets at most two updates a second (and the
    last one always)."""
    last = [0.0]

    def write(text: str, final: bool) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_UPDATE_S or final:
            last[0] = now
            status.content = text
            asyncio.get_running_loop().create_task(status.update())

    return write


def progress_reporter(status: cl.Message):
    write = status_writer(status)
    return lambda progress: write(progress.line(), progress.finished == progress.total)


async def send_result(output: Path, summary: Summary | None) -> None:
    if summary is not None:
        metrics.ROWS_TRANSLATED.inc(summary.translated)
        metrics.ROWS_FAILED.inc(summary.failed)
    text = summary.line().replace(f" → {output}", "") if summary else (
        "Stopped. The rows finished so far are in the file below; the others are marked.")
    await cl.Message(content=text, author="glm1m", elements=[
        cl.File(name=output.name, path=str(output), display="inline", mime="text/csv")]).send()


async def run_document(path: Path, name: str, question: str) -> None:
    settings = get_settings()
    status = cl.Message(content=f"Reading **{name}** …", author="glm1m")
    await status.send()
    try:
        pdf = await asyncio.to_thread(extract, path, PdfLimits(settings.pdf_max_mb, settings.pdf_max_pages),
                                      name, threadsafe_reporter(status, "Reading pages"))
        status.content = f"Counting tokens of **{name}** …"
        await status.update()
        budget = await documents.measure(pdf, llm(), settings.whole_document_threshold,
                                         settings.max_tokens, reporter(status, "Counting tokens, pages"))
    except UserFacingError as error:
        await show_error(error)
        return
    strategy = await choose_strategy(budget)
    status.content = f"**{name}**: {budget.line()} Reading it {strategy_words(strategy)}."
    await status.update()
    cl.user_session.set("document", documents.OpenDocument(pdf, budget, strategy))
    await ask_document(question.strip() or documents.SUMMARY_REQUEST)


async def choose_strategy(budget: documents.Budget) -> documents.Strategy:
    """Ask only when it matters: past the threshold, whole-document reading costs minutes."""
    if len(budget.offered) == 1 or budget.tokens <= budget.threshold:
        return budget.default
    answer = await cl.AskActionMessage(
        content=f"{budget.line()}\n\n{documents.describe_wait(budget.tokens)}\n\nRead it whole "
                f"(best answers) or part by part (map-reduce: the first answer comes sooner)?",
        author="glm1m", timeout=600,
        actions=[cl.Action(name="strategy", payload={"strategy": s.value}, label=strategy_words(s))
                 for s in sorted(budget.offered, key=lambda s: s != budget.default)],
    ).send()
    return documents.Strategy(answer["payload"]["strategy"]) if answer else budget.default


def strategy_words(strategy: documents.Strategy) -> str:
    return "whole" if strategy is documents.Strategy.WHOLE else "part by part (map-reduce)"


async def ask_document(question: str) -> None:
    settings = get_settings()
    doc: documents.OpenDocument = cl.user_session.get("document")
    params: ChatParams = cl.user_session.get("params")
    plan = documents.map_reduce_plan(doc.budget, settings.map_chunk_tokens, settings.map_concurrency,
                                     settings.map_note_tokens)
    status = cl.Message(content=waiting_line(doc, 0), author="glm1m")
    await status.send()
    heartbeat = asyncio.create_task(keep_alive(status, doc))
    answer = cl.Message(content="")
    try:
        pieces = documents.answer(doc.pdf, doc.budget, doc.strategy, question, llm(), params, plan,
                                  reporter(status, None))
        async for piece in coalesce(pieces, settings.stream_flush_s):
            heartbeat.cancel()
            await answer.stream_token(piece)
    except UserFacingError as error:
        await finish(answer)
        await show_error(error)
        return
    finally:
        heartbeat.cancel()
    answer.elements = cited_passages(answer.content, doc.pdf)
    metrics.DOCUMENTS.inc()
    await finish(answer)


def waiting_line(doc: documents.OpenDocument, elapsed_s: float) -> str:
    if doc.strategy is documents.Strategy.MAP_REDUCE:
        return f"Reading {doc.pdf.name} part by part … {elapsed_s:.0f} s"
    left = documents.estimate_prefill_s(doc.budget.tokens) - elapsed_s
    tail = f"about {left:.0f} s left on an H200 (an estimate)" if left > 1 else "nearly there"
    return f"The model is reading all {doc.budget.tokens:,} tokens of {doc.pdf.name} … {elapsed_s:.0f} s, {tail}"


async def keep_alive(status: cl.Message, doc: documents.OpenDocument) -> None:
    """Until the first token, say every few seconds what is happening: a long prefill must not
    look frozen, and a silent socket for ~45 s can lose the message (Chainlit issue #803)."""
    started = time.monotonic()
    while True:
        await asyncio.sleep(KEEP_ALIVE_S)
        status.content = waiting_line(doc, time.monotonic() - started)
        await status.update()


def cited_passages(answer: str, pdf: PdfText) -> list:
    """The cited pages as side elements, linked from the answer by their names ("p. 3")."""
    pages = {p.number: p for p in pdf.pages}
    return [cl.Text(name=f"p. {n}", content=pages[n].text[:PASSAGE_CHARS], display="side")
            for n in documents.cited_pages(answer, pdf.page_count)]


def reporter(status: cl.Message, label: str | None):
    write = status_writer(status)

    def report(*args) -> None:
        stage, done, total = (label, *args) if label else args
        write(f"{stage}: {done:,} of {total:,}", done == total)

    return report


def threadsafe_reporter(status: cl.Message, label: str):
    loop = asyncio.get_running_loop()
    report = reporter(status, label)
    return lambda done, total: loop.call_soon_threadsafe(report, done, total)
