"""A table translation on the page (CSV or XLSX): choose what to translate (table_choice.py), say
what the job will do, run it with a live status line that ends as a record, and hand back the
file — also the rows finished so far when the user stops it or closes the tab (leaving.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chainlit as cl

from chainlit_app import leaving, metrics, session
from chainlit_app.client import llm
from chainlit_app.i18n import ZH, seconds, t, target_words, unit_words
from chainlit_app.status import AUTHOR, StatusLine
from chainlit_app.table_choice import choose_table
from glm1m.files import folder_name, output_stem
from glm1m.settings import get_settings
from glm1m.translation.fanout import Job
from glm1m.translation.formats import Source, mime_of, output_suffix
from glm1m.translation.job import Summary, job_key, run_job
from glm1m.translation.table import read_glossary
from glm1m.translation.xlsx import XlsxSource


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
    status = await StatusLine(t(state.lang, "tr_starting"),
                              head=job_head(state.lang, name, source, job, glossary_file)).send()
    try:
        summary = await run_job(source, job, llm(), output, status.report, key)
    except asyncio.CancelledError:
        # Stop (the button, or the tab closed): run_job has written the finished rows; hand them
        # over before ending.
        await status.finish(t(state.lang, "tr_stopped_at", line=done_line(state.lang, status),
                              seconds=seconds(state.lang, status.elapsed_s), rate=rate(state.lang, status)))
        await send_result(output, None)
        raise
    except Exception:
        await status.finish(t(state.lang, "tr_failed_at", seconds=seconds(state.lang, status.elapsed_s)))
        raise
    await status.finish(t(state.lang, "tr_done", line=summary_line(state.lang, summary),
                          seconds=seconds(state.lang, status.elapsed_s), rate=rate(state.lang, status)))
    await send_result(output, summary)


def job_head(lang: str, name: str, source: Source, job: Job,
             glossary_file: tuple[Path, str] | None) -> str:
    """What the job will do, said before it starts and kept above its progress: the file, its
    encoding, the column, both languages, the glossary — and what closing the tab does."""
    glossary = (t(lang, "tr_glossary", count=len(job.glossary), name=glossary_file[1])
                if job.glossary and glossary_file else "")
    source_words = (target_words(lang, job.source_language) if job.source_language
                    else t(lang, "tr_detected"))
    if isinstance(source, XlsxSource):
        how = t(lang, "tr_sheet", sheet=source.sheet)
    else:
        how = t(lang, "tr_encoding", encoding=source.encoding_name)
    columns = ("**、**" if lang == ZH else "**, **").join(source.chosen)
    columns = t(lang, "tr_column" if len(source.chosen) == 1 else "tr_columns", columns=columns)
    head = t(lang, "tr_head", name=name, how=how, columns=columns, source=source_words,
             target=target_words(lang, job.target_language), glossary=glossary)
    return f"{head}\n\n*{t(lang, 'tr_tab', grace=f'{leaving.GRACE_S:.0f}')}*"


def rate(lang: str, status: StatusLine) -> str:
    """" (18.8 rows/s)": units this run finished per second (resumed ones took no time), or ""."""
    progress = status.progress
    if progress is None or progress.done <= progress.resumed:
        return ""
    return t(lang, "tr_rate", rate=progress.per_s, unit=unit_words(lang, progress.unit))


def done_line(lang: str, status: StatusLine) -> str:
    """The rows finished when the job stopped, from its last progress."""
    progress = status.progress
    if progress is None:
        return t(lang, "summary", translated=0, total=0, unit=unit_words(lang, "rows"))
    return t(lang, "summary", translated=progress.done - progress.failed, total=progress.total,
             unit=unit_words(lang, progress.unit))


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
    lang = session.lang()
    text = summary_line(lang, summary) if summary else t(lang, "tr_stopped")
    await cl.Message(content=text, author=AUTHOR, elements=[
        cl.File(name=output.name, path=str(output), display="inline", mime=mime_of(output))]).send()


def summary_line(lang: str, summary: Summary) -> str:
    """Summary.line() without the output's path (the file is attached), in the page's language."""
    if lang != ZH:
        return summary.line().replace(f" → {summary.output}", "")
    text = t(lang, "summary", translated=summary.translated, total=summary.total,
             unit=unit_words(lang, getattr(summary, "unit", "rows")))
    if summary.failed:
        text += t(lang, "summary_failed", failed=summary.failed)
    if summary.not_reached:
        text += t(lang, "summary_not_reached", count=summary.not_reached)
    return text
