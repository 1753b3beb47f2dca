"""The app's own sentences in English and Simplified Chinese, chosen from the browser's language.

Chainlit takes the language from the first tag of the socket's Accept-Language header (a zh-CN
browser gets "zh-CN") and translates its own parts from `.chainlit/translations`; the sentences
glm1m writes follow the same choice: any "zh" tag reads Chinese (Simplified), everything else
English. The sentences themselves, the page's and the core's errors alike, are in the one catalog
(glm1m/catalog/); this module is the page's door to it, with the words it puts together (units,
target languages, durations); a progress line is the core's Progress.line(lang). No Chainlit
import here, so it is tested without a server.
"""

from __future__ import annotations

from glm1m.catalog import CATALOG as TEXT, EN, LANGUAGES, ZH, language_of, render as t
from glm1m.progress import unit_said

__all__ = ["EN", "TEXT", "ZH", "language_of", "t"]  # the catalog's, as the page has named them


def in_every_language(key: str) -> dict[str, str]:
    """Entry `key` (no fields) said in each language of the catalog: a command's name, which is
    also the id the page gets back when it is chosen, in whichever language the page showed it."""
    return {lang: t(lang, key) for lang in LANGUAGES}


def default_target(lang: str) -> str:
    """The target language a spreadsheet is translated into unless chosen: the other of the two."""
    return "English" if lang == ZH else "简体中文"


def target_words(lang: str, target: str) -> str:
    """A target language as a sentence says it ("简体中文" reads "Simplified Chinese" in English)."""
    key = f"language_{target}"
    return t(lang, key) if key in TEXT else target


def unit_words(lang: str, unit: str, count: int = 0) -> str:
    """A core unit ("rows", "pages", ...) in words: English "row" where `count` is 1, else "rows"."""
    return unit_said(unit, count).render(lang)


def seconds(lang: str, n: float) -> str:
    if n >= 90:
        return t(lang, "minutes", n=n / 60)
    return t(lang, "seconds" if n < 10 else "seconds_whole", n=n)


def count_of(lang: str, n: int, unit: str) -> str:
    """"6 pages", "1 page", "6 页"; unit is a core unit: "pages", "parts", "sections", ..."""
    return t(lang, "counted", count=n, unit=unit_said(unit, n))

