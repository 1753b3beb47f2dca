"""A whole document translated on the page: the composer's Translate command (翻译 on a Chinese
page). Sent with a document (Markdown, TXT, HTML, DOCX, PDF, EPUB) it translates it section by
section into the ⚙ panel's target language through the core (glm1m.doc_translation.job.
run_document, as `glm1m translate FILE --to LANG` does), its status line moving as each section
is finished, what the format cannot keep said above it, and hands back the file in its own format
with the glossary the model made (OUT.glossary.csv).

Why a command, as Grid is: a document with a message is a question about it (document_flow.py),
and asking after every upload "translate or ask?" would cost each question a click; the user who
wants the whole document translated says so with the composer's button. Under it an attached
table is translated as a table, as without it (translation_flow.py).

The output's folder is DATA_DIR/doc_translations/<user>/<job>, the job being the document's bytes
and name, the source and target languages and the page's language (the marks' language): the same
document sent again — after a stop, a closed tab, in another chat — continues from the core's
checkpoint, the sections finished before not asked again, and the page says how many.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import chainlit as cl
from chainlit.types import CommandDict

from glm1m.catalog import Said
from glm1m.chainlit_app import language_question, leaving, session
from glm1m.chainlit_app.client import llm
from glm1m.chainlit_app.grid_flow import named_links
from glm1m.chainlit_app.i18n import in_every_language, seconds, t, target_words, unit_words
from glm1m.chainlit_app.status import AUTHOR, StatusLine, ask_choice, say, says_own_stop
from glm1m.chainlit_app.table_choice import CHOICE_TIMEOUT_S
from glm1m.chainlit_app.translation_flow import count_line, done_line, rate, run_translation
from glm1m.chainlit_app.uploads import Upload, UploadedFile, sort_uploads
from glm1m.doc_translation.formats import opening_text, translates_in_place
from glm1m.doc_translation.glossary import glossary_path
from glm1m.doc_translation.job import DocJob, DocSummary, run_document
from glm1m.documents.formats import format_of
from glm1m.documents.ocr import OcrOptions
from glm1m.documents.shelf import file_sha256
from glm1m.files import folder_name, output_stem
from glm1m.progress import Progress
from glm1m.settings import get_settings
from glm1m.translation.formats import mime_of
from glm1m.translation.job import checkpoint_path
from glm1m.translation.written_in import target_for

COMMANDS = in_every_language("doc_page_command_name")  # the command's id is the name the composer shows
# The core's glossary notes name the file's path on the server and the CLI's --glossary; the page
# hands the CSV over instead, and says so in its own words.
GLOSSARY_NOTES = {"doc_tr_glossary_written": "doc_page_glossary_made",
                  "doc_tr_glossary_reused": "doc_page_glossary_reused"}


def commands(lang: str) -> list[CommandDict]:
    """For cl.context.emitter.set_commands: the Translate command, a button in the composer."""
    return [CommandDict(id=COMMANDS[lang], icon="languages", description=t(lang, "doc_page_command"),
                        button=True, persistent=False, selected=False)]


def is_translate(command: str | None) -> bool:
    return command in COMMANDS.values()


async def run_document_page(elements: Sequence[UploadedFile]) -> None:
    """The Translate command's message: its document translated and handed back; a table alone
    is translated as a table; without either it says how the command is used."""
    lang = session.lang()
    uploads = sort_uploads(elements)
    if not uploads.documents and uploads.tables:
        glossary = (uploads.glossary[0].path, uploads.glossary[0].name) if uploads.glossary else None
        await run_translation(uploads.tables[0].path, uploads.tables[0].name, glossary)
        return
    if not uploads.documents:
        await say(t(lang, "doc_page_how", command=COMMANDS[lang]))
        return
    document, others = uploads.documents[0], uploads.documents[1:] + uploads.tables + uploads.glossary
    if others:
        await say(t(lang, "doc_page_left_out", names=[f.name for f in others], count=len(others),
                    used=document.name))
    if not translates_in_place(Path(document.name)):
        await say(t(lang, "doc_page_format", name=document.name))
        return
    await translate_document(document)


def job_of(lang: str) -> DocJob:
    """The job as the CLI builds it, with the ⚙ panel's languages and the page's language."""
    state, settings = session.current(), get_settings()
    return DocJob(target_language=state.target_language, source_language=state.source_language,
                  bilingual=state.bilingual,
                  concurrency=settings.translate_concurrency, max_tokens=settings.translate_max_tokens,
                  lang=lang, ocr=OcrOptions.of(settings))


async def translate_document(document: Upload) -> None:
    lang = session.lang()
    await llm().max_model_len()  # the server is up: not every section marked as failed when it is not
    job, path, output, flipped = await settle_target(document, job_of(lang))
    if output.exists() and not checkpoint_path(output).exists():  # finished before
        if await take_earlier_result(document.name, job):
            await send_files(output, t(lang, "doc_page_result_before", name=document.name,
                                       target=target_words(lang, job.target_language)))
            return
        output.unlink()
    notes: list[str] = []
    if flipped:  # the default target was the document's own language: said above the progress
        notes.append(t(lang, "doc_page_target_other", target=target_words(lang, job.target_language),
                       written=target_words(lang, session.current().target_language)))
    head = job_head(lang, document.name, job, None, notes)
    status = await StatusLine(t(lang, "tr_starting"), head=head).send()

    def on_note(note: Said) -> None:  # what the format cannot keep: a line each, above the progress
        if note.key == "doc_tr_glossary_written" and not note.fields.get("count"):
            return  # an empty glossary: the core's doc_tr_glossary_none has said why
        notes.append(note_words(lang, note))
        status.head = job_head(lang, document.name, job, status.progress, notes)

    def on_progress(progress: Progress) -> None:
        if status.progress is None and progress.resumed:  # said once, from the core's own count
            status.progress = progress
            status.head = job_head(lang, document.name, job, progress, notes)
        status.report(progress)

    try:
        with says_own_stop():
            summary = await run_document(path, job, llm(), output, on_progress, on_note)
    except asyncio.CancelledError:
        await said_stopped(status, output)
        raise
    except Exception:
        await status.finish(t(lang, "tr_failed_at", seconds=seconds(lang, status.elapsed_s)))
        raise
    # The record and the files in one message: the document and its glossary under what it holds.
    # (Chainlit types Message.elements with a TypeVar, which an assignment cannot bind.)
    status.message.elements = files_of(output)  # type: ignore[assignment]
    kept = summary.consistency  # how well the glossary was kept, where it had terms to keep
    consistency = ("\n\n" + t(lang, "doc_page_consistency", kept=kept.kept, uses=kept.uses)
                   if kept.uses else "")
    await status.finish(t(lang, "tr_done", line=summary_line(lang, summary),
                          seconds=seconds(lang, status.elapsed_s), rate=rate(lang, status)) + consistency)


async def settle_target(document: Upload, job: DocJob) -> tuple[DocJob, Path, Path, bool]:
    """The job's target, before any section goes out: the page's default is never the language
    the document is in (True last: it was, and the other is taken), and a new job says its
    languages with a one-click change (language_question.py). Returns the job, the document's
    and the output's paths (prepare) and whether the default was turned."""
    path, output = await asyncio.to_thread(prepare, document, job)
    default, flipped = job.target_language, False
    if not session.current().target_chosen:
        target = await asyncio.to_thread(lambda: target_for(default, opening_text(path)))
        if target != default:
            job, flipped = replace(job, target_language=target), True
            path, output = await asyncio.to_thread(moved, document, job, output)
    if language_question.asks() and not output.exists() and not checkpoint_path(output).exists():
        chosen = await language_question.confirm_target(job.source_language, job.target_language)
        if chosen != job.target_language:
            job, flipped = replace(job, target_language=chosen), False
            path, output = await asyncio.to_thread(moved, document, job, output)
    return job, path, output, flipped


def moved(document: Upload, job: DocJob, before: Path) -> tuple[Path, Path]:
    """prepare() for the job's new target; the folder made for the target before is taken away
    when nothing was done in it (it holds the document's link alone)."""
    folder = before.parent
    if not before.exists() and not checkpoint_path(before).exists():
        shutil.rmtree(folder, ignore_errors=True)
    return prepare(document, job)


def prepare(document: Upload, job: DocJob) -> tuple[Path, Path]:
    """(the document under its own name, the output's path): the output's folder is the job's, so
    the same document, languages and page language find the checkpoint again. Reads the file:
    run in a thread."""
    user = cl.context.session.user if get_settings().auth_required else None
    base = get_settings().data_dir / "doc_translations" / folder_name(user.identifier if user else "-")
    what = [file_sha256(document.path), document.name, job.target_language, job.source_language, job.lang,
            *(["bilingual"] if job.bilingual else [])]  # so a document's earlier folders stay its own
    folder = base / hashlib.sha256(json.dumps(what, ensure_ascii=False).encode()).hexdigest()[:24]
    # The layout is chosen by the name's suffix: Chainlit keeps uploads under ids.
    path = named_links([document], folder / "document")[0]
    output = folder / f"{output_stem(document.name)}.{t(job.lang, 'doc_page_file_tag')}{path.suffix}"
    return path, output


async def take_earlier_result(name: str, job: DocJob) -> bool:
    """For a document finished before: True to hand back that file (also when no choice is made in
    time: nothing is lost), False to translate it again."""
    lang = job.lang
    answer = await ask_choice(cl.AskActionMessage(
        content=t(lang, "doc_page_done_before", name=name, target=target_words(lang, job.target_language)),
        author=AUTHOR, timeout=CHOICE_TIMEOUT_S, actions=[
            cl.Action(name="earlier", payload={"again": False}, label=t(lang, "tr_take_result")),
            cl.Action(name="earlier", payload={"again": True}, label=t(lang, "tr_again"))]))
    return not (answer and answer["payload"].get("again"))


def job_head(lang: str, name: str, job: DocJob, progress: Progress | None = None,
             notes: Sequence[str] = ()) -> str:
    """What the job does, kept above its progress: the document and both languages, where a
    resumed job continues from, what the format cannot keep, and what closing the tab does."""
    source = target_words(lang, job.source_language) if job.source_language else t(lang, "tr_detected")
    head = t(lang, "doc_page_head", name=name, source=source, target=target_words(lang, job.target_language))
    if progress is not None and progress.resumed:
        head += "\n\n" + t(lang, "tr_continuing", done=progress.resumed, total=progress.total,
                            left=progress.total - progress.resumed,
                            unit=unit_words(lang, progress.unit, progress.total))
    head += "".join(f"\n- {note}" for note in notes)
    tab = t(lang, "doc_page_tab", grace=f"{leaving.GRACE_S:.0f}", command=COMMANDS[lang])
    return f"{head}\n\n*{tab}*"


def note_words(lang: str, note: Said) -> str:
    """A note of the core's in the page's language, the glossary's in the page's own words."""
    if note.key in GLOSSARY_NOTES:
        return t(lang, GLOSSARY_NOTES[note.key], **{k: v for k, v in note.fields.items() if k != "path"})
    return note.render(lang)


async def said_stopped(status: StatusLine, output: Path) -> None:
    """Stop (the button, or the tab closed): the core has written the output, the finished
    sections translated and the rest in the original and marked; hand it over under the record —
    or say that none was finished, and hand over nothing."""
    lang, progress = status.lang, status.progress
    when = seconds(lang, status.elapsed_s)
    done = 0 if progress is None else progress.done - progress.failed
    if done == 0 or not output.exists():
        await status.finish(t(lang, "tr_stopped_none", seconds=when, unit=unit_words(lang, "sections", 1)))
        return
    status.message.elements = files_of(output)  # type: ignore[assignment]
    left = progress.total - done if progress else 0
    await status.finish(t(lang, "tr_stopped_at", line=done_line(lang, status), seconds=when,
                          rate=rate(lang, status)) + "\n\n"
                        + t(lang, "doc_page_stopped_file", count=left, command=COMMANDS[lang]))


def files_of(output: Path) -> list[cl.File]:
    """The translated document and, where the model gave one, its glossary (CSV)."""
    glossary = glossary_path(output)
    document = format_of(output.name)
    files = [cl.File(name=output.name, path=str(output), display="inline",
                     mime=document.mime if document else mime_of(output))]
    if glossary.exists():
        files.append(cl.File(name=glossary.name, path=str(glossary), display="inline",
                             mime=mime_of(glossary)))
    return files


async def send_files(output: Path, text: str) -> None:
    await cl.Message(content=text, author=AUTHOR, elements=files_of(output)).send()


def summary_line(lang: str, summary: DocSummary) -> str:
    """DocSummary.line() without the output's path (the file is attached), in the page's
    language."""
    text = count_line(lang, summary.translated, summary.total, "sections", summary.resumed)
    if summary.failed:
        text += t(lang, "doc_tr_failed", failed=summary.failed)
    if summary.not_reached:
        text += t(lang, "summary_not_reached", count=summary.not_reached)
    return text
