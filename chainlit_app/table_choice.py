"""What to translate in an attached table: the sheet of a workbook that has several, then one
column or several. Each is a choice of buttons (Chainlit's AskActionMessage); the first offered
is what `glm1m translate` would take without flags (the sheet Excel opens on, the first text
column), and a choice not made within the timeout takes it too."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import chainlit as cl

from chainlit_app.status import AUTHOR, ask_choice
from glm1m.translation.formats import Source, is_workbook, open_table
from glm1m.translation.xlsx import XlsxSource, sheet_names, shown

CHOICE_TIMEOUT_S = 300
SEVERAL = "several"  # the payload key of the button that starts choosing several columns
START = "start"

# English and Simplified Chinese, chosen from the browser's language as the rest of the app does.
TEXT = {
    "sheet": ("**{name}** has {count} sheets. Which one should be translated?",
              "**{name}** 有 {count} 个工作表。翻译哪一个？"),
    "column": ("Which column should be translated?", "翻译哪一列？"),
    "several": ("Several columns …", "多列 …"),
    "more": ("Columns chosen: {chosen}. Add another, or start?",
             "已选择的列：{chosen}。再加一列，还是开始？"),
    "start": ("Start", "开始"),
}


def say(key: str, **fields: object) -> str:
    english, chinese = TEXT[key]
    language = (getattr(cl.context.session, "language", None) or "").lower()
    return (chinese if language.startswith("zh") else english).format(**fields)


async def choose_table(path: Path, name: str) -> Source:
    """Open the upload as CSV or XLSX (off the event loop: both read the whole file) and let the
    user choose the sheet and the columns."""
    sheet = None
    if is_workbook(path, name):  # the sheet first: the one Excel opens on may hold no table
        sheets = await asyncio.to_thread(sheet_names, path, name)
        if len(sheets) > 1:
            sheet = await choose_sheet(name, sheets)
    source = await asyncio.to_thread(open_table, path, name, sheet)
    return await choose_columns(source)


async def choose_sheet(name: str, sheets: tuple[str, ...]) -> str:
    """sheets[0] is offered first, and taken when no choice is made."""
    answer = await ask_choice(cl.AskActionMessage(
        content=say("sheet", name=name, count=len(sheets)), author=AUTHOR, timeout=CHOICE_TIMEOUT_S,
        actions=[cl.Action(name="sheet", payload={"sheet": s}, label=s) for s in sheets],
    ))
    return str(answer["payload"]["sheet"]) if answer else sheets[0]


def label(source: Source, column: str) -> str:
    if isinstance(source, XlsxSource):
        return shown(column, source.letters[source.position(column)])
    return column


async def choose_columns(source: Source) -> Source:
    """One column (a button each), or several: the last button asks for one more at a time."""
    if len(source.columns) < 2:
        return source
    ordered = [source.column] + [c for c in source.columns if c != source.column]
    actions = [cl.Action(name="column", payload={"column": c}, label=label(source, c)) for c in ordered]
    actions.append(cl.Action(name="column", payload={"column": "", SEVERAL: True},
                             label=say("several")))
    answer = await ask_choice(cl.AskActionMessage(content=say("column"), author=AUTHOR,
                                                  timeout=CHOICE_TIMEOUT_S, actions=actions))
    if not answer:
        return source
    if not answer["payload"].get(SEVERAL):
        return with_columns(source, (str(answer["payload"]["column"]),))
    chosen: list[str] = []
    while len(chosen) < len(ordered):
        left = [c for c in ordered if c not in chosen]
        actions = [cl.Action(name="column", payload={"column": c}, label=label(source, c)) for c in left]
        if chosen:
            actions.append(cl.Action(name="column", payload={"column": "", START: True},
                                     label=say("start")))
        content = say("more", chosen=", ".join(label(source, c) for c in chosen)) if chosen else say("column")
        answer = await ask_choice(cl.AskActionMessage(content=content, author=AUTHOR,  # a timeout starts
                                                      timeout=CHOICE_TIMEOUT_S, actions=actions),
                                  first_on_timeout=False)
        if not answer or answer["payload"].get(START):
            break
        chosen.append(str(answer["payload"]["column"]))
    return with_columns(source, tuple(chosen) or (source.column,))


def with_columns(source: Source, columns: tuple[str, ...]) -> Source:
    if isinstance(source, XlsxSource):
        return replace(source, chosen=columns)
    return replace(source, column=columns[0], targets=columns if len(columns) > 1 else ())
