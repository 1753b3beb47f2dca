"""A document's glossary: asked of the model once per document part (the first pass), read
leniently, merged with the user's (the user's translation of a term wins), and written beside the
output as a two-column CSV the user can edit and pass back with --glossary."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable
from pathlib import Path

Glossary = tuple[tuple[str, str], ...]
OBJECT = re.compile(r"\{.*\}", re.S)
MOST_TERMS = 200  # every request carries the glossary: keep it a small part of the prompt


def parse_glossary(reply: str) -> Glossary:
    """The terms of a reply: {"terms": [{"term", "translation"}]} as asked, also inside prose or
    a code fence, or as a plain {term: translation} object; () for anything else."""
    found = OBJECT.search(reply)
    if found is None:
        return ()
    try:
        data = json.loads(found.group(0))
    except ValueError:
        return ()
    items: Iterable[object]
    if isinstance(data, dict) and isinstance(data.get("terms"), list):
        items = data["terms"]
    elif isinstance(data, dict):
        items = [{"term": k, "translation": v} for k, v in data.items()]
    else:
        return ()
    pairs = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("term"), str) \
                and isinstance(item.get("translation"), str):
            term, target = item["term"].strip(), item["translation"].strip()
            if term and target and "\n" not in term + target:
                pairs.append((term, target))
    return tuple(pairs)


def merge(users: Glossary, *models: Glossary) -> Glossary:
    """The user's terms first and as given; then each model term the user did not give, once."""
    merged: dict[str, tuple[str, str]] = {}
    for term, target in users:
        merged[term.casefold()] = (term, target)
    for glossary in models:
        for term, target in glossary:
            merged.setdefault(term.casefold(), (term, target))
    return tuple(merged.values())[:MOST_TERMS]


def glossary_path(output: Path) -> Path:
    """OUT.glossary.csv beside OUT (doc.translated.md → doc.translated.glossary.csv)."""
    return output.with_name(output.stem + ".glossary.csv")


def write_glossary(path: Path, glossary: Glossary) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["term", "translation"])
        writer.writerows(glossary)
