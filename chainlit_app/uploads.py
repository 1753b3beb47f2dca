"""Which uploaded files a message carries, by content kind (no Chainlit import: duck-typed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol


class UploadedFile(Protocol):
    name: str
    path: str | None
    mime: str | None


GLOSSARY_NAMES = ("glossary", "terms", "术语", "词汇")


@dataclass
class Uploads:
    csv: list[UploadedFile] = field(default_factory=list)
    glossary: list[UploadedFile] = field(default_factory=list)  # a CSV named like a glossary
    pdf: list[UploadedFile] = field(default_factory=list)
    other: list[UploadedFile] = field(default_factory=list)


def sort_uploads(elements: list[UploadedFile]) -> Uploads:
    uploads = Uploads()
    for element in elements:
        if not element.path:
            continue
        suffix = PurePosixPath(element.name).suffix.lower()
        mime = (element.mime or "").lower()
        if suffix == ".csv" or mime in ("text/csv", "application/csv"):
            uploads.csv.append(element)
        elif suffix == ".pdf" or mime == "application/pdf":
            uploads.pdf.append(element)
        else:
            uploads.other.append(element)
    # With two CSVs attached, the one named like a glossary is the glossary; a single CSV is
    # always the data, whatever its name ("terms.csv" may well be the file to translate).
    if len(uploads.csv) > 1:
        named = [f for f in uploads.csv if any(w in f.name.lower() for w in GLOSSARY_NAMES)]
        if named:
            uploads.glossary = named[:1]
            uploads.csv = [f for f in uploads.csv if f is not named[0]]
    return uploads
