"""Each lookup the model makes while it looks things up (glm1m/documents/lookup.py) as a Chainlit
step the person can open: what it asked for (the words, the location) and what it read back.
Steps are Chainlit's public way to show a tool's work (cot = "full" in .chainlit/config.toml
shows them); they are kept with the chat's history like its messages."""

from __future__ import annotations

import chainlit as cl

from glm1m.documents.lookup import Lookup


async def show(lang: str, lookup: Lookup) -> None:
    # The name says what was asked and found; opened, the step shows what the model read back:
    # the documents' text as a block of its own, or, where nothing was read, why, in the page's
    # language. No step language: Chainlit 2.12 writes it above the block as its label ("text").
    async with cl.Step(name=lookup.words(lang), type="tool", show_input=False) as step:
        step.input = lookup.asked
        step.output = lookup.shown(lang) if lookup.note is not None else fenced(lookup.result)


def fenced(text: str) -> str:
    """`text` as a Markdown code block, its fence longer than any run of backticks inside."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text}\n{fence}"
