"""Each lookup the model makes while it looks things up (glm1m/documents/lookup.py) as a Chainlit
step the person can open: what it asked for (the words, the location) and what it read back.
Steps are Chainlit's public way to show a tool's work (cot = "full" in .chainlit/config.toml
shows them); they are kept with the chat's history like its messages."""

from __future__ import annotations

import chainlit as cl

from glm1m.documents.lookup import Lookup


async def show(lang: str, lookup: Lookup) -> None:
    # The name says what was asked and found; opened, the step shows what the model read back.
    async with cl.Step(name=lookup.words(lang), type="tool", language="text",
                       show_input=False) as step:
        step.input = lookup.asked
        step.output = lookup.result
