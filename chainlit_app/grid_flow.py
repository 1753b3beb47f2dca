"""Documents as batch work on the page: the composer's Grid command (问答表 on a Chinese page).
Sent with documents and questions — one a line in the message, a table pasted from a
spreadsheet, or an attached CSV/XLSX of questions as `glm1m grid --questions` reads it — it asks
every question of every document through the core (glm1m.grid.job.run_grid, built as the CLI
builds it), moves its status line as each cell is answered, and hands back the XLSX: a row a
document, a column a question, sheets grid, passages and problems.

Why a command, as the Shelf is: without one, several documents with a message are one set asked
together (document_flow.py) and an attached table is translated (translation_flow.py); a message
of question lines with documents reads as either, so the user says which with the composer's
button, and under it an attached table is the questions, not a table to translate.

The job's folder is DATA_DIR/grids/<user>/<job>, the job being its questions, its documents
(names and bytes), how they are read and the page's language: the same documents and questions
sent again — after a stop, a closed tab, in another chat — continue where the core's checkpoint
left them, the documents finished before not asked again, and the page says how many.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path, PurePosixPath, PureWindowsPath

import chainlit as cl
from chainlit.types import CommandDict

from glm1m.catalog import said
from glm1m.chainlit_app import leaving, session
from glm1m.chainlit_app.client import llm
from glm1m.chainlit_app.document_flow import user_shelf
from glm1m.chainlit_app.i18n import in_every_language, seconds, t
from glm1m.chainlit_app.status import StatusLine, say, says_own_stop
from glm1m.chainlit_app.uploads import Upload, UploadedFile, sort_uploads
from glm1m.documents.formats import ReadOptions
from glm1m.documents.shelf import file_sha256
from glm1m.files import folder_name, output_stem
from glm1m.grid.cells import Asking, params_of
from glm1m.grid.checkpoint import job_id, kept
from glm1m.grid.job import Summary, reading_of, run_grid
from glm1m.grid.questions import Question, from_message, read_questions
from glm1m.settings import get_settings
from glm1m.translation import xlsx
from glm1m.translation.formats import mime_of

COMMANDS = in_every_language("grid_command_name")  # the command's id is the name the composer shows


def commands(lang: str) -> list[CommandDict]:
    """For cl.context.emitter.set_commands: the Grid command, a button in the composer."""
    return [CommandDict(id=COMMANDS[lang], icon="table", description=t(lang, "grid_command"),
                        button=True, persistent=False, selected=False)]


def is_grid(command: str | None) -> bool:
    return command in COMMANDS.values()


async def run_grid_page(elements: Sequence[UploadedFile], text: str) -> None:
    """The Grid command's message: its documents asked its questions, the table handed back.
    Without documents or questions it says how the command is used."""
    state, settings = session.current(), get_settings()
    lang = state.lang
    uploads = sort_uploads(elements)
    tables = uploads.tables + uploads.glossary  # under Grid a table is the questions, never translated
    if not uploads.documents or not (tables or text.strip()):
        await say(t(lang, "grid_how", command=COMMANDS[lang]))
        return
    if len(tables) > 1:
        await say(t(lang, "grid_tables_left_out", names=[f.name for f in tables[1:]],
                    count=len(tables) - 1, used=tables[0].name))
    await llm().max_model_len()  # the server is up: not every cell marked as failed when it is not
    # As the CLI asks (params_of), with the answer length of the page's ⚙ panel.
    params = replace(params_of(settings), max_tokens=state.params.max_tokens)
    asking = Asking((), llm(), settings, user_shelf(), ReadOptions.of(settings), params, lang,
                    asyncio.Lock())
    folder, asking, documents = await asyncio.to_thread(prepare, uploads.documents, tables[:1], text, asking)
    output = folder / f"{t(lang, 'grid_file_stem')}{xlsx.FORMAT.suffixes[0]}"  # the grid's sheets: XLSX
    earlier = await asyncio.to_thread(kept, output)
    status = await StatusLine(t(lang, "tr_starting"),
                              head=job_head(lang, asking.questions, documents, tables[:1], earlier)).send()
    try:
        with says_own_stop():
            summary = await run_grid(documents, asking, output, settings.grid_concurrency, status.report)
    except asyncio.CancelledError:
        # Stop (the button, or the tab closed): the core kept each finished document; say how
        # many, once (not Chainlit's line too). No table yet: it is written when every one is asked.
        progress, left = status.progress, await asyncio.to_thread(kept, output)
        await status.finish(t(lang, "grid_stopped", seconds=seconds(lang, status.elapsed_s),
                              done=progress.done - progress.failed if progress else 0,
                              total=len(documents) * len(asking.questions), kept=left,
                              count=len(documents), command=COMMANDS[lang]))
        raise
    except Exception:
        await status.finish(t(lang, "tr_failed_at", seconds=seconds(lang, status.elapsed_s)))
        raise
    # The record and the table in one message: the file to download under what it holds.
    # (Chainlit types Message.elements with a TypeVar, which an assignment cannot bind.)
    status.message.elements = [cl.File(name=output.name, path=str(output), display="inline",  # type: ignore[list-item]
                                       mime=mime_of(output))]
    await status.finish(done_line(lang, summary, len(asking.questions), status.elapsed_s))


def prepare(documents: Sequence[Upload], tables: Sequence[Upload], text: str,
            asking: Asking) -> tuple[Path, Asking, tuple[Path, ...]]:
    """(the job's folder, `asking` with its questions, the documents under their own names):
    the questions of the attached table, else of the message. Reads files: run in a thread."""
    lang = asking.lang
    user = cl.context.session.user if get_settings().auth_required else None
    base = get_settings().data_dir / "grids" / folder_name(user.identifier if user else "-")
    work = base / "uploads" / folder_name(cl.context.session.id)
    if tables:  # read by its name's format: Chainlit keeps uploads under ids
        questions = read_questions(named_links(tables, work / "questions")[0])
    else:
        questions = from_message(text, t(lang, "grid_message"))
    asking = replace(asking, questions=questions)
    keys = [file_sha256(f.path) for f in documents]
    what = [job_id(questions, reading_of(asking)), [f.name for f in documents], keys, lang]
    job = hashlib.sha256(json.dumps(what, ensure_ascii=False).encode()).hexdigest()[:24]
    folder = base / job
    # The grid names each row by its file's name: the documents are linked under theirs.
    return folder, asking, named_links(documents, folder / "documents")


def named_links(files: Sequence[Upload], folder: Path) -> tuple[Path, ...]:
    """Each upload under its own name in `folder` (a second of one name numbered), hard-linked
    where the file system allows, else copied; each replaced whole, so a run still reading the
    one there before never finds it missing."""
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for number, upload in enumerate(files, start=1):
        stem = output_stem(upload.name)
        suffix = PurePosixPath(PureWindowsPath(PurePosixPath(upload.name).name).name).suffix
        name = f"{stem}{suffix}" if folder / f"{stem}{suffix}" not in paths else f"{stem} ({number}){suffix}"
        path, temporary = folder / name, folder / f".{name}.{secrets.token_hex(4)}.part"
        try:
            os.link(upload.path, temporary)
        except OSError:  # another file system: copied
            temporary.write_bytes(upload.path.read_bytes())
        os.replace(temporary, path)
        paths.append(path)
    return tuple(paths)


def job_head(lang: str, questions: tuple[Question, ...], documents: tuple[Path, ...],
             tables: Sequence[Upload], earlier: int) -> str:
    """What the job will do, kept above its progress: the questions and where they came from, the
    documents, where a resumed job continues from, and what closing the tab does."""
    source = t(lang, "grid_from_file", name=tables[0].name) if tables else t(lang, "grid_from_message")
    head = t(lang, "grid_head", questions=said("grid_questions_count", count=len(questions)),
             source=source, documents=said("grid_documents_count", count=len(documents)),
             names=[path.name for path in documents])
    if earlier:
        head += "\n\n" + t(lang, "grid_continuing", kept=earlier, count=len(documents),
                            left=len(documents) - earlier)
    tab = t(lang, "grid_tab", grace=f"{leaving.GRACE_S:.0f}", command=COMMANDS[lang])
    return f"{head}\n\n*{tab}*"


def done_line(lang: str, summary: Summary, questions: int, elapsed_s: float) -> str:
    """The record: the cells as the CLI counts them (the file's name, not its path: it is
    attached), and how many documents an earlier run had answered."""
    cells = replace(summary, output=Path(summary.output.name)).said(questions).render(lang)
    resumed = (" " + said("cli_grid_resumed", count=summary.resumed).render(lang)) if summary.resumed else ""
    return t(lang, "grid_done", seconds=seconds(lang, elapsed_s), cells=cells, resumed=resumed)
