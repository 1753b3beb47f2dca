"""Every id of the catalog says, in English and in Chinese, exactly what it said when the catalog
moved to a file per language (issue 35): tests/support/catalog_renderings.json holds a digest of
each id's renderings, with every field a placeholder that shows its name and format, and `count`
both 1 and 2. A rewording (or an id removed) changes the file: write it again with
`GLM1M_RENDERINGS=write .venv/bin/pytest tests/unit/test_catalog_renderings.py`."""

from __future__ import annotations

import hashlib
import json
import os

from glm1m.catalog import CATALOG, EN, ZH, field_names, render
from tests.conftest import ROOT

SAVED = ROOT / "tests" / "support" / "catalog_renderings.json"


class Field:
    """A field's value that says where it went and how it was formatted."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __format__(self, spec: str) -> str:
        return f"<{self.name}:{spec}>"

    def __str__(self) -> str:
        return f"<{self.name}>"

    def __repr__(self) -> str:
        return f"<{self.name}!r>"


def renderings(key: str) -> str:
    names = field_names(key)
    said = []
    for lang in (EN, ZH):
        for count in ((1, 2) if "count" in names else (None,)):
            fields: dict[str, object] = {name: Field(name) for name in names - {"count"}}
            if count is not None:
                fields["count"] = count
            said.append(render(lang, key, **fields))
    return "\x1f".join(said)


def digests() -> dict[str, str]:
    return {key: hashlib.sha256(renderings(key).encode()).hexdigest()[:16] for key in sorted(CATALOG)}


def test_every_id_renders_in_both_languages_as_it_did() -> None:
    now = digests()
    if os.environ.get("GLM1M_RENDERINGS") == "write":
        SAVED.write_text(json.dumps(now, indent=0, ensure_ascii=False) + "\n", encoding="utf-8")
    saved = json.loads(SAVED.read_text(encoding="utf-8"))
    assert sorted(set(saved) - set(now)) == []  # no id lost (a new id is not in the file yet)
    assert [key for key in saved if now[key] != saved[key]] == []
