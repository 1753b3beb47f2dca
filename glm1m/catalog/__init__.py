"""One catalog of the sentences a person reads, in English and Simplified Chinese.

Every sentence has an id and named fields (str.format), gettext's convention: the code that says
something names the id and passes the fields; it never writes the sentence, and nothing reads a
finished sentence back. An entry is (English, Chinese) side by side, so a rewording is one edit
of one entry, and tests/unit/test_catalog.py fails when an id lacks a language or a field, or a
module names an id that is not here or passes other fields than the id's.

Plurals: English that depends on a number has two forms, (one, other), chosen by the `count`
field ("1 page", "2 pages"); Chinese has one form. `count` is the one field a form may leave out
("its only page"). A field may itself be a `Said` (an id and its fields), rendered in the same
language, or a list, joined as the language lists things ("a.csv, b.pdf", "a.csv、b.pdf").

The entries are data, TOML files beside this module, one table per part of the program, as a
gettext catalog keeps its sentences in files of their own: core.toml (the core's commoner errors and
notes), inputs.toml (the rarer failures of documents, tables and accounts), limits.toml (the
server's limits on one upload's reading work), serving.toml (the model server's, the plan's and
starting's), cli.toml (the command line's own lines), progress.toml (the words of a progress line,
which both doors say), page.toml (the web page's own words), tools.toml (looking things up),
grid.toml (a grid of questions over documents) and doc_translation.toml (a document translated
section by section: its lines, what it cannot keep, the marks in its output).
An entry is a table named by its id, `en` (a string, or [one, other]) and `zh`:

    [doc_read_whole]
    en = "Read **{name}**: {pages}, {tokens:,} tokens, whole, in {seconds}."
    zh = "已读取 **{name}**：{pages}，{tokens:,} 个词元，整篇，用时 {seconds}。"

An id is in exactly one table (a test checks). They are read once, when glm1m.catalog is imported
(~5 ms with tomllib).
"""

from __future__ import annotations

import string
import tomllib
from dataclasses import dataclass, field
from importlib.resources import files
from typing import Any

EN, ZH = "en", "zh"
LANGUAGES = (EN, ZH)

English = str | tuple[str, str]  # one sentence, or (one, other) chosen by `count`
Entry = tuple[English, str]
TABLES = ("core", "inputs", "limits", "serving", "cli", "progress", "page", "tools", "grid",
          "doc_translation")


def read_table(name: str) -> dict[str, Entry]:
    """One table of the catalog (`name`.toml beside this module), id -> (English, Chinese)."""
    data = tomllib.loads(files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8"))
    return {key: (tuple(entry["en"]) if isinstance(entry["en"], list) else entry["en"], entry["zh"])
            for key, entry in data.items()}


TABLE: dict[str, dict[str, Entry]] = {name: read_table(name) for name in TABLES}
CATALOG: dict[str, Entry] = {key: entry for table in TABLE.values() for key, entry in table.items()}


@dataclass(frozen=True)
class Said:
    """A sentence by id and fields, not yet in a language: a field of another sentence, or what
    an error carries."""
    key: str
    fields: dict[str, Any] = field(default_factory=dict)

    def render(self, lang: str) -> str:
        return render(lang, self.key, **self.fields)


def said(key: str, **fields: Any) -> Said:
    return Said(key, fields)


def language_of(tag: str | None) -> str:
    """EN or ZH for a language tag or locale ("zh-CN", "zh_CN.UTF-8", "zh", "en-US", "C", None):
    any "zh" reads Chinese (Simplified), everything else English."""
    return ZH if (tag or "").strip().lower().startswith("zh") else EN


def render(lang: str, key: str, **fields: Any) -> str:
    """The sentence `key` in `lang` (EN or ZH) with its fields; KeyError for an unknown id."""
    english, chinese = CATALOG[key]
    values = {name: _rendered(lang, value) for name, value in fields.items()}
    if lang == ZH:
        return chinese.format(**values)
    if isinstance(english, tuple):
        english = english[0] if values["count"] == 1 else english[1]
    return english.format(**values)


def _rendered(lang: str, value: Any) -> Any:
    if isinstance(value, Said):
        return value.render(lang)
    if isinstance(value, list):
        return render(lang, "list_sep").join(str(_rendered(lang, item)) for item in value)
    return value


def fields_of(text: str) -> set[str]:
    """The field names a sentence uses ("{tokens:,} of {max}" -> {"tokens", "max"})."""
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(text) if name}


def forms_of(key: str) -> list[str]:
    """Every form of entry `key`: its English (one or two) and its Chinese."""
    english, chinese = CATALOG[key]
    return [*(english if isinstance(english, tuple) else (english,)), chinese]


def field_names(key: str) -> set[str]:
    """The fields entry `key` takes: those of any of its forms, and `count` where English has two."""
    names = set().union(*(fields_of(form) for form in forms_of(key)))
    return names | {"count"} if isinstance(CATALOG[key][0], tuple) else names
