"""Which uploaded files a message carries, by content kind (no Chainlit import: duck-typed)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
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


UNSAFE_IN_NAMES = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")
MAX_STEM_BYTES = 150  # the folder's own path and ".translated.csv" must fit too (255 a name)


def output_stem(uploaded_name: str, fallback: str = "upload") -> str:
    """A file-name stem made from what the browser sent as a name, which may hold anything: the
    last path part (either slash), no NUL or control characters, cut whole-character at 150
    UTF-8 bytes."""
    last = PureWindowsPath(PurePosixPath(uploaded_name).name).name
    stem = UNSAFE_IN_NAMES.sub("_", PurePosixPath(last).stem).strip(" .")
    # Cut the bytes, then drop a character the cut split in two.
    stem = stem.encode("utf-8")[:MAX_STEM_BYTES].decode("utf-8", "ignore")
    return stem or fallback


UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def folder_name(ident: str) -> str:
    """A folder name for a thread or session id. Those come from the browser (Chainlit takes them
    from the socket's auth payload unchecked), so anything but a UUID is replaced by its hash."""
    return ident if UUID.fullmatch(ident) else hashlib.sha256(ident.encode()).hexdigest()[:32]
