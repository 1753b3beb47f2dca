"""A table translation on the page (CSV or XLSX): choose what to translate (table_choice.py), say
what the job will do, run it with a live status line that ends as a record, and hand back the
file — also the rows finished so far when the user stops it or closes the tab (leaving.py), and
nothing, said plainly, when none was. The same file again in the same chat, with the same
settings, is the same job: finished, its result is offered (or a fresh run); cut short, it
continues, saying from where."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import chainlit as cl

from glm1m.catalog import Said
from glm1m.chainlit_app import language_question, leaving, metrics, session
from glm1m.chainlit_app.client import llm
from glm1m.chainlit_app.i18n import ZH, seconds, t, target_words, unit_words
from glm1m.chainlit_app.status import AUTHOR, StatusLine, ask_choice, says_own_stop
from glm1m.chainlit_app.table_choice import CHOICE_TIMEOUT_S, choose_table
from glm1m.files import folder_name, output_stem
from glm1m.settings import get_settings
from glm1m.translation.fanout import Job
from glm1m.translation.formats import mime_of
from glm1m.translation.job import Earlier, Summary, earlier_work, forget, job_key, run_job
from glm1m.translation.source import TableSource
from glm1m.translation.table import read_glossary
from glm1m.translation.written_in import target_for


async def run_translation(path: Path, name: str, glossary_file: tuple[Path, str] | None = None) -> None:
    state = session.current()
    # Opening reads the whole file (its encoding, its rows): off the event loop, so other sessions
    # stream. The same pass hashes a CSV for the job's key and counts its rows.
    source = await choose_table(path, name)  # any table format, its sheet and columns chosen
    glossary = await asyncio.to_thread(read_glossary, *glossary_file) if glossary_file else ()
    target = state.target_language
    if not state.target_chosen:  # the page's default: never the language the table is in
        target = await asyncio.to_thread(lambda: target_for(target, first_cells(source)))
    job, key, output, earlier = await job_for(source, name, target, glossary)
    flipped = target != state.target_language  # said in the head: the table is in the default
    if earlier is None and language_question.asks():  # before any row goes out
        chosen = await language_question.confirm_target(state.source_language, target)
        if chosen != target:
            job, key, output, earlier = await job_for(source, name, chosen, glossary)
            target, flipped = chosen, False
    if earlier is not None and earlier.finished:
        if await take_earlier_result(name, earlier):
            await send_file(output, t(state.lang, "tr_result_before", name=name, total=earlier.total,
                                      unit=unit_words(state.lang, earlier.unit, earlier.total)))
            return
        await asyncio.to_thread(forget, output)
        earlier = None
    head = job_head(state.lang, name, source, job, glossary_file, earlier)
    if flipped:
        head += "\n\n" + t(state.lang, "tr_target_other", target=target_words(state.lang, target),
                            written=target_words(state.lang, state.target_language))
    status = await StatusLine(t(state.lang, "tr_starting"), head=head).send()
    try:
        with says_own_stop():
            summary = await run_job(source, job, llm(), output, status.report, key)
    except asyncio.CancelledError:
        # Stop (the button, or the tab closed): run_job has written the finished rows; hand them
        # over before ending — or say that there are none, and hand over nothing.
        when = seconds(state.lang, status.elapsed_s)
        if translated_so_far(status) == 0:
            unit = status.progress.unit if status.progress else "rows"
            await status.finish(t(state.lang, "tr_stopped_none", seconds=when,
                                  unit=unit_words(state.lang, unit, 1)))
            raise
        await status.finish(t(state.lang, "tr_stopped_at", line=done_line(state.lang, status),
                              seconds=when, rate=rate(state.lang, status)))
        await send_result(output, None)
        raise
    except Exception:
        await status.finish(t(state.lang, "tr_failed_at", seconds=seconds(state.lang, status.elapsed_s)))
        raise
    await status.finish(t(state.lang, "tr_done", line=summary_line(state.lang, summary),
                          seconds=seconds(state.lang, status.elapsed_s), rate=rate(state.lang, status)))
    await send_result(output, summary)


async def job_for(source: TableSource, name: str, target: str, glossary: tuple[tuple[str, str], ...]
                  ) -> tuple[Job, str, Path, Earlier | None]:
    """The job into `target`: its key, its output's path and what an earlier run of it left."""
    state, settings = session.current(), get_settings()
    job = Job(target_language=target, source_language=state.source_language,
              glossary=glossary, concurrency=settings.translate_concurrency,
              max_tokens=settings.translate_max_tokens, lang=session.lang())
    # One folder per job: the same file and settings again resume it, anything else (another
    # file of the same name, another language) starts its own instead of clashing.
    key = await asyncio.to_thread(job_key, source, job)  # a workbook's bytes are read here
    folder = translation_dir() / key[:16]
    folder.mkdir(exist_ok=True)
    output = folder / f"{output_stem(name)}.translated{source.output_suffix}"
    return job, key, output, await asyncio.to_thread(earlier_work, source, output, key)  # reads it


async def take_earlier_result(name: str, earlier: Earlier) -> bool:
    """For a job finished before: True to hand back its result (also when no choice is made in
    time: nothing is lost), False to translate the file again."""
    lang = session.lang()
    answer = await ask_choice(cl.AskActionMessage(
        content=t(lang, "tr_done_before", name=name, total=earlier.total,
                  unit=unit_words(lang, earlier.unit, earlier.total)),
        author=AUTHOR, timeout=CHOICE_TIMEOUT_S, actions=[
            cl.Action(name="earlier", payload={"again": False}, label=t(lang, "tr_take_result")),
            cl.Action(name="earlier", payload={"again": True}, label=t(lang, "tr_again"))]))
    return not (answer and answer["payload"].get("again"))


def first_cells(source: TableSource) -> list[str]:
    """The chosen columns' first cells: enough to tell which language the table is in."""
    return next(iter(source.cell_chunks()), [])


def translated_so_far(status: StatusLine) -> int:
    """Cells translated when the job stopped, those of earlier runs included."""
    progress = status.progress
    return 0 if progress is None else progress.done - progress.failed


def layout_words(lang: str, source: TableSource) -> str:
    """A text table's layout (the delimiter, the title rows left out) in the page's language."""
    layout = source.reading.layout
    return layout.render(lang) if isinstance(layout, Said) else ""


def job_head(lang: str, name: str, source: TableSource, job: Job,
             glossary_file: tuple[Path, str] | None, earlier: Earlier | None = None) -> str:
    """What the job will do, said before it starts and kept above its progress: the file, its
    encoding and layout, the column, both languages, the glossary, where a resumed job continues
    from — and what closing the tab does."""
    glossary = (t(lang, "tr_glossary", count=len(job.glossary), name=glossary_file[1])
                if job.glossary and glossary_file else "")
    source_words = (target_words(lang, job.source_language) if job.source_language
                    else t(lang, "tr_detected"))
    sheet = source.reading.sheet
    if sheet is not None:
        how = t(lang, "tr_sheet", sheet=sheet)
    else:
        how = t(lang, "tr_encoding", encoding=source.reading.encoding) + layout_words(lang, source)
    columns = ("**、**" if lang == ZH else "**, **").join(source.chosen)
    columns = t(lang, "tr_column" if len(source.chosen) == 1 else "tr_columns", columns=columns)
    head = t(lang, "tr_head", name=name, how=how, columns=columns, source=source_words,
             target=target_words(lang, job.target_language), glossary=glossary)
    if earlier is not None:
        head += "\n\n" + t(lang, "tr_continuing", done=earlier.done, total=earlier.total,
                            left=earlier.total - earlier.done,
                            unit=unit_words(lang, earlier.unit, earlier.total))
    return f"{head}\n\n*{t(lang, 'tr_tab', grace=f'{leaving.GRACE_S:.0f}')}*"


def rate(lang: str, status: StatusLine) -> str:
    """" (18.8 rows/s; 5,210 tokens, 330 tokens/s)": what this run did per second (resumed units
    took no time), the tokens where the client counted them; or ""."""
    progress = status.progress
    if progress is None or progress.done <= progress.resumed:
        return ""
    unit = unit_words(lang, progress.unit)
    elapsed = time.monotonic() - progress.started
    if progress.tokens and elapsed > 0:
        return t(lang, "tr_rate_tokens", rate=progress.per_s, unit=unit, tokens=progress.tokens,
                 tokens_rate=progress.tokens / elapsed)
    return t(lang, "tr_rate", rate=progress.per_s, unit=unit)


def done_line(lang: str, status: StatusLine) -> str:
    """The rows finished when the job stopped, from its last progress."""
    progress = status.progress
    if progress is None:
        return t(lang, "summary", translated=0, total=0, unit=unit_words(lang, "rows"))
    return count_line(lang, progress.done - progress.failed, progress.total, progress.unit,
                      progress.resumed)


def count_line(lang: str, translated: int, total: int, unit: str, resumed: int) -> str:
    """"50 of 50 rows translated", with what an earlier run had done apart from this run's work."""
    text = t(lang, "summary", translated=translated, total=total, unit=unit_words(lang, unit, total))
    if resumed:
        text += t(lang, "summary_resumed", resumed=resumed, new=translated - resumed)
    return text


def translation_dir() -> Path:
    # By thread, not by connection: a resumed thread (after a restart, too) finds the checkpoint
    # of a batch that was cut short, and attaching the same file again resumes it.
    folder = get_settings().data_dir / "translations" / folder_name(cl.context.session.thread_id)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def send_result(output: Path, summary: Summary | None) -> None:
    if summary is not None:
        metrics.ROWS_TRANSLATED.inc(summary.translated - summary.resumed)
        metrics.ROWS_FAILED.inc(summary.failed)
    lang = session.lang()
    await send_file(output, summary_line(lang, summary) if summary else t(lang, "tr_stopped"))


async def send_file(output: Path, text: str) -> None:
    await cl.Message(content=text, author=AUTHOR, elements=[
        cl.File(name=output.name, path=str(output), display="inline", mime=mime_of(output))]).send()


def summary_line(lang: str, summary: Summary) -> str:
    """Summary.line() without the output's path (the file is attached), in the page's language."""
    text = count_line(lang, summary.translated, summary.total, summary.unit, summary.resumed)
    if summary.failed:
        text += t(lang, "summary_failed", failed=summary.failed)
    if summary.not_reached:
        text += t(lang, "summary_not_reached", count=summary.not_reached)
    return text
