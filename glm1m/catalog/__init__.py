"""One catalog of the sentences a person reads, a file per language and domain (gettext's layout).

Every sentence has an id and named fields (str.format), gettext's convention: the code that says
something names the id and passes the fields; it never writes the sentence, and nothing reads a
finished sentence back. English is the source language: en/<domain>.toml holds every id, and its
forms say which fields the id takes and whether it has plurals. Each other language is a folder of
the same name beside it (zh/ for Simplified Chinese) whose <domain>.toml gives the same ids in that
language; adding a language is adding its folder. A language's file may leave ids out: such an id
is said in English (per entry), so a partial translation already works. The shipped languages are
whole: tests/unit/test_catalog.py fails when an id of en/ lacks its translation in the same
domain's file or has other fields, or a module names an id that is not in en/ or passes other
fields than the id's; tests/unit/test_catalog_renderings.py keeps what each id says.

The domains are by meaning, not by door or by kind of sentence: an id lives in the one domain its
sentence is about, whether it is an error, a line on stderr or the page's words (documents,
waiting, shelf, tables, encodings, uploads, accounts, settings, serving, grid, doc_translation,
tools, progress, limits; chrome for the page's frame; core for what every domain shares: a list's
joins and the leads of errors). A rewording is one edit of one line in en/ and one in zh/.

    # en/documents.toml
    doc_read_whole = "Read **{name}**: {pages}, {tokens:,} tokens, whole, in {seconds}."
    pages = ["{count:,} page", "{count:,} pages"]
    # zh/documents.toml
    doc_read_whole = "已读取 **{name}**：{pages}，{tokens:,} 个词元，整篇，用时 {seconds}。"
    pages = "{count:,} 页"

Plurals: a sentence that depends on a number may have two forms, [one, other], chosen by the
`count` field ("1 page", "2 pages"); Chinese has one form. `count` is the one field a form may
leave out ("its only page"). A field may itself be a `Said` (an id and its fields), rendered in the
same language, or a list, joined as the language lists things ("a.csv, b.pdf", "a.csv、b.pdf").

An id is in exactly one domain (a test checks). The files are read once, when glm1m.catalog is
imported (~5 ms with tomllib); `read_catalog` reads another folder of them (a test's).
"""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import Any

EN, ZH = "en", "zh"
SOURCE = EN  # the language whose files hold every id, and say its fields and plurals

Form = str | tuple[str, ...]  # one sentence, or (one, other) chosen by `count`
Domain = dict[str, Form]  # id -> form, one file


def read_domain(file: Traversable) -> Domain:
    """One file of one language: id -> its sentence (or its [one, other])."""
    data = tomllib.loads(file.read_text(encoding="utf-8"))
    return {key: tuple(form) if isinstance(form, list) else form for key, form in data.items()}


class Catalog:
    """Every language's domains; an id a language leaves out is said in English."""

    def __init__(self, languages: dict[str, dict[str, Domain]]) -> None:
        self.domains = languages  # language -> domain -> id -> form
        self.languages = tuple(languages)
        self.entries = {lang: {key: form for domain in domains.values() for key, form in domain.items()}
                        for lang, domains in languages.items()}

    def form(self, lang: str, key: str) -> Form:
        """`key` in `lang`, or in English where `lang` lacks it; KeyError for an id English lacks."""
        source = self.entries[SOURCE][key]
        return self.entries.get(lang, {}).get(key, source)

    def render(self, lang: str, key: str, **fields: Any) -> str:
        """The sentence `key` in `lang` with its fields; KeyError for an unknown id."""
        form = self.form(lang, key)
        values = {name: self._rendered(lang, value) for name, value in fields.items()}
        if isinstance(form, tuple):
            form = form[0] if values["count"] == 1 else form[1]
        return form.format(**values)

    def _rendered(self, lang: str, value: Any) -> Any:
        if isinstance(value, Said):
            return self.render(lang, value.key, **value.fields)
        if isinstance(value, list):
            return self.render(lang, "list_sep").join(str(self._rendered(lang, item)) for item in value)
        return value


def read_catalog(root: Traversable) -> Catalog:
    """The catalog in `root`: a folder per language (en/ first, the others by name), a file per
    domain in each."""
    folders = sorted((folder for folder in root.iterdir()
                      if folder.is_dir() and any(f.name.endswith(".toml") for f in folder.iterdir())),
                     key=lambda folder: (folder.name != SOURCE, folder.name))
    return Catalog({folder.name: {file.name.removesuffix(".toml"): read_domain(file)
                                  for file in sorted(folder.iterdir(), key=lambda f: f.name)
                                  if file.name.endswith(".toml")}
                    for folder in folders})


SHIPPED = read_catalog(files(__name__))
LANGUAGES = SHIPPED.languages  # (EN, ZH)
CATALOG: Domain = SHIPPED.entries[SOURCE]  # every id, in English


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
    """A catalog language for a language tag or locale ("zh-CN", "zh_CN.UTF-8", "zh", "en-US", "C",
    None): its language if the catalog has it (any "zh" reads Simplified Chinese), else English."""
    primary = re.split(r"[-_.@]", (tag or "").strip().lower())[0]
    return primary if primary in LANGUAGES else EN


def render(lang: str, key: str, **fields: Any) -> str:
    """The sentence `key` in `lang` (EN, ZH; English where `lang` lacks it) with its fields;
    KeyError for an unknown id."""
    return SHIPPED.render(lang, key, **fields)


def fields_of(text: str) -> set[str]:
    """The field names a sentence uses ("{tokens:,} of {max}" -> {"tokens", "max"})."""
    return {name.split(".")[0].split("[")[0]
            for _, name, _, _ in string.Formatter().parse(text) if name}


def forms_of(key: str) -> list[str]:
    """Every form of entry `key` in every shipped language that has it, English's first."""
    return [form for lang in LANGUAGES if key in SHIPPED.entries[lang]
            for form in _forms(SHIPPED.entries[lang][key])]


def _forms(form: Form) -> tuple[str, ...]:
    return form if isinstance(form, tuple) else (form,)


def field_names(key: str) -> set[str]:
    """The fields entry `key` takes: those of any of its forms, and `count` where English has two."""
    names = set().union(*(fields_of(form) for form in forms_of(key)))
    return names | {"count"} if isinstance(CATALOG[key], tuple) else names
