"""Which uploaded files a message carries, by content kind (no Chainlit import: duck-typed)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from glm1m.catalog import Said, said
from glm1m.documents.formats import FORMATS, format_of
from glm1m.translation.formats import GLOSSARY, named as table_format, table_formats


class UploadedFile(Protocol):
    name: str
    path: str | None
    mime: str | None


@dataclass(frozen=True)
class Upload:
    """An uploaded file and where it lies on disk (sort_uploads skips elements without a path)."""
    name: str
    path: Path


GLOSSARY_NAMES = ("glossary", "terms", "术语", "词汇")
DOCUMENT_MIMES = {f.mime for f in FORMATS}  # every document format goes to the `documents` list
TABLE_MIMES = {m for f in table_formats() for m in f.mimes}  # every table goes to the `tables` list


@dataclass
class Uploads:
    tables: list[Upload] = field(default_factory=list)  # every table: CSV, TSV, XLSX (translation/table.py)
    glossary: list[Upload] = field(default_factory=list)  # a CSV named like a glossary
    documents: list[Upload] = field(default_factory=list)  # every document: PDF, DOCX, EPUB, ... (formats.py)
    other: list[Upload] = field(default_factory=list)

    def left_out(self) -> Said | None:
        """A message works on one table (with its glossary), or else on its documents, all of
        them together: the sentence (by id) naming the files left out, which would otherwise be
        ignored without a word; None if none are."""
        if not self.tables:
            return None
        used, tables, documents = self.tables[0], self.tables[1:], self.documents
        unread = tables + documents
        if not unread:
            return None
        return said("left_out_documents" if documents else "left_out_tables", used=used.name,
                    names=[f.name for f in unread], count=len(unread))


def sort_uploads(elements: Sequence[UploadedFile]) -> Uploads:
    uploads = Uploads()
    for element in elements:
        if not element.path:
            continue
        mime = (element.mime or "").lower()
        upload = Upload(element.name, Path(element.path))
        if table_format(element.name) is not None or mime in TABLE_MIMES:
            uploads.tables.append(upload)
        elif format_of(element.name) is not None or mime in DOCUMENT_MIMES:
            uploads.documents.append(upload)
        else:
            uploads.other.append(upload)
    # With two CSVs attached, the one named like a glossary is the glossary; a single CSV is
    # always the data, whatever its name ("terms.csv" may well be the file to translate).
    if len(uploads.tables) > 1:
        named = [f for f in uploads.tables if any(w in f.name.lower() for w in GLOSSARY_NAMES)
                 and table_format(f.name) is GLOSSARY]  # a glossary is a two-column CSV
        if named:
            uploads.glossary = named[:1]
            uploads.tables = [f for f in uploads.tables if f is not named[0]]
    return uploads
