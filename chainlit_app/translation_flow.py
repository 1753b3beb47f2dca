"""A CSV translation on the page: choose the column, run the job with a live status line, and
hand back the file — also the rows finished so far when the user stops it."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import chainlit as cl

from chainlit_app import metrics, session
from chainlit_app.client import llm
from chainlit_app.status import AUTHOR, StatusLine
from chainlit_app.table_choice import choose_table
from glm1m.files import folder_name, output_stem
from glm1m.settings import get_settings
from glm1m.translation.fanout import Job
from glm1m.translation.formats import mime_of, output_suffix
from glm1m.translation.job import Summary, job_key, run_job
from glm1m.translation.table import CsvSource, read_glossary

COLUMN_TIMEOUT_S = 300
STOPPED = "Stopped. The rows finished so far are in the file below; the others are marked."


async def run_translation(path: Path, name: str, glossary_file: tuple[Path, str] | None = None) -> None:
    state = session.current()
    settings = get_settings()
    # Both read the whole file (encoding detection): off the event loop, so other sessions stream.
    source = await choose_table(path, name)  # CSV or XLSX, its sheet and columns chosen
    glossary = await asyncio.to_thread(read_glossary, *glossary_file) if glossary_file else ()
    job = Job(target_language=state.target_language, source_language=state.source_language,
              glossary=glossary, concurrency=settings.translate_concurrency,
              max_tokens=settings.translate_max_tokens)
    # One folder per job: the same file and settings again resume it, anything else (another
    # file of the same name, another language) starts its own instead of clashing.
    key = await asyncio.to_thread(job_key, source, job)  # reads the whole file
    folder = translation_dir() / key[:16]
    folder.mkdir(exist_ok=True)
    output = folder / f"{output_stem(name)}.translated{output_suffix(source)}"
    status = await StatusLine(
        f"Reading **{name}** as {source.encoding_name}; translating column **{source.column}** "
        f"into {job.target_language}{f' with {len(glossary)} glossary terms' if glossary else ''} …"
    ).send()
    try:
        summary = await run_job(source, job, llm(), output, status.report, key)
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
        content="Which column should be translated?", author=AUTHOR, timeout=COLUMN_TIMEOUT_S,
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


async def send_result(output: Path, summary: Summary | None) -> None:
    if summary is not None:
        metrics.ROWS_TRANSLATED.inc(summary.translated)
        metrics.ROWS_FAILED.inc(summary.failed)
    text = summary.line().replace(f" → {output}", "") if summary else STOPPED
    await cl.Message(content=text, author=AUTHOR, elements=[
        cl.File(name=output.name, path=str(output), display="inline", mime=mime_of(output))]).send()
