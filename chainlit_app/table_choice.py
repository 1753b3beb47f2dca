"""What to translate in an attached table: the sheet of a workbook that has several, then one
column or several. Each is a choice of buttons (Chainlit's AskActionMessage); the first offered
is what `glm1m translate` would take without flags (the sheet Excel opens on, the first text
column), and a choice not made within the timeout takes it too. Only columns with text are
offered: an id, an amount or a date has nothing to translate. Several columns are chosen in one
question whose buttons toggle a column in or out, and nothing starts before "Start"."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

import chainlit as cl

from glm1m.chainlit_app.i18n import EN, ZH, t
from glm1m.chainlit_app.status import AUTHOR, ask_choice
from glm1m.translation.formats import open_table, sheet_names
from glm1m.translation.source import TableSource

CHOICE_TIMEOUT_S = 300
SEVERAL = "several"  # the payload key of the button that starts choosing several columns
START = "start"

TICK = "✓ "  # before a chosen column's button


def chinese() -> bool:
    return (getattr(cl.context.session, "language", None) or "").lower().startswith("zh")


def say(key: str, **fields: object) -> str:
    """Sentence `key` of the catalog (its pick_* ids) in the page's language."""
    return t(ZH if chinese() else EN, key, **fields)


def joined(labels: Iterable[str], zh: bool | None = None) -> str:
    """"a, b"; a name that holds a comma (or, in Chinese, 、 or ，) is quoted, so "Chosen: x, y" is
    one list however the columns are named: “City, State”, Zip. `zh`: None, the page's language."""
    zh = chinese() if zh is None else zh
    separators = (",", "、", "，") if zh else (",",)
    return ("、" if zh else ", ").join(
        f"“{label}”" if any(s in label for s in separators) else label for label in labels)


async def choose_table(path: Path, name: str) -> TableSource:
    """Open the upload as the table it is (off the event loop: opening reads the whole file) and
    let the user choose the sheet and the columns."""
    sheet = None
    # The sheet first, where the format has sheets: the one Excel opens on may hold no table.
    sheets = await asyncio.to_thread(sheet_names, path, name)
    if len(sheets) > 1:
        sheet = await choose_sheet(name, sheets)
    source = await asyncio.to_thread(open_table, path, name, sheet)
    return await choose_columns(source)


async def choose_sheet(name: str, sheets: tuple[str, ...]) -> str:
    """sheets[0] is offered first, and taken when no choice is made."""
    answer = await ask_choice(cl.AskActionMessage(
        content=say("pick_sheet", name=name, count=len(sheets)), author=AUTHOR, timeout=CHOICE_TIMEOUT_S,
        actions=[cl.Action(name="sheet", payload={"sheet": s}, label=s) for s in sheets],
    ))
    return str(answer["payload"]["sheet"]) if answer else sheets[0]


async def choose_columns(source: TableSource) -> TableSource:
    """One column (a button each), or several (the last button): only columns with text are
    offered, and a table with one such column is not asked about."""
    texts = source.text_columns()  # found as the table was opened
    offered = [c for c in source.columns if c in texts] or list(source.columns)  # none: all
    ordered = list(dict.fromkeys([source.column, *offered] if source.column in offered else offered))
    if len(ordered) < 2:
        return source.with_columns((ordered[0],))
    actions = [cl.Action(name="column", payload={"column": c}, label=source.label(c)) for c in ordered]
    actions.append(cl.Action(name="column", payload={"column": "", SEVERAL: True},
                             label=say("pick_several")))
    answer = await ask_choice(cl.AskActionMessage(content=say("pick_column"), author=AUTHOR,
                                                  timeout=CHOICE_TIMEOUT_S, actions=actions))
    if not answer:
        return source.with_columns((ordered[0],))
    if not answer["payload"].get(SEVERAL):
        return source.with_columns((str(answer["payload"]["column"]),))
    return source.with_columns(await choose_several(source, ordered))


async def choose_several(source: TableSource, ordered: list[str]) -> tuple[str, ...]:
    """One question at a time on the page: each click toggles a column and asks again in place of
    the last question; "Start" (shown once a column is chosen) ends it, and so does the timeout,
    with the columns chosen by then (none: the first offered). Choosing every column does not
    start the job: the user may still take one out."""
    chosen: list[str] = []
    while True:
        shown = joined(source.label(c) for c in chosen) or say("pick_none_yet")
        actions = [cl.Action(name="column", payload={"column": c},
                             label=(TICK if c in chosen else "") + source.label(c)) for c in ordered]
        if chosen:
            actions.append(cl.Action(name="column", payload={"column": "", START: True},
                                     label=say("pick_start")))
        ask = cl.AskActionMessage(content=say("pick_columns", chosen=shown), author=AUTHOR,
                                  timeout=CHOICE_TIMEOUT_S, actions=actions)
        answer = await ask.send()
        if answer is None or answer["payload"].get(START):
            columns = tuple(chosen) or (ordered[0],)
            ask.content = say("pick_chosen", chosen=joined(source.label(c) for c in columns))
            await ask.update()
            return columns
        column = str(answer["payload"]["column"])
        chosen = [c for c in chosen if c != column] if column in chosen else [*chosen, column]
        await ask.remove()

