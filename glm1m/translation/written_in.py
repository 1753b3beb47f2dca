"""Which of the page's two languages a text is already written in, from its letters: the default
target of a translation must not be the language the text is in (issue 34: a Chinese table on an
English page was translated "into Simplified Chinese" without a word). Letters, not a model: the
question is only "mostly Han characters, or Latin letters with none", which a count answers."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

# The two default targets, as the ⚙ panel's values (chainlit_app/i18n.py default_target).
ENGLISH = "English"
CHINESE = "简体中文"
SAMPLE_CHARS = 20_000  # enough to decide; a long table is not read through for it


def script_of(texts: Iterable[str]) -> str | None:
    """CHINESE when at least 30 % of the letters are Han characters, ENGLISH when they are Latin
    letters with almost no Han (under 1 %); None when neither holds (another script, a mix, no
    letters)."""
    han = latin = letters = seen = 0
    for text in texts:
        for char in text:
            seen += 1
            if not char.isalpha():
                continue
            letters += 1
            if "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf":
                han += 1
            elif char.isascii() or unicodedata.name(char, "").startswith("LATIN"):
                latin += 1
        if seen >= SAMPLE_CHARS:
            break
    if letters == 0:
        return None
    if han >= 0.3 * letters:
        return CHINESE
    if han < 0.01 * letters and latin >= 0.9 * letters:
        return ENGLISH
    return None


def target_for(default: str, texts: Iterable[str]) -> str:
    """`default` (English or 简体中文), or the other of the two when the text is already written
    in it."""
    if default not in (ENGLISH, CHINESE) or script_of(texts) != default:
        return default
    return CHINESE if default == ENGLISH else ENGLISH
