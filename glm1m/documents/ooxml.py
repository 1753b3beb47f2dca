"""Strict Office Open XML read as the Transitional OOXML that MuPDF and openpyxl know.

ISO/IEC 29500 Strict (Word's and Excel's "Strict Open XML" save option, and some exporters such as
Teams transcripts) is the same package with other namespaces: http://purl.oclc.org/ooxml/...
instead of http://schemas.openxmlformats.org/.../2006/... . MuPDF 1.28 called a valid Strict DOCX
damaged, and openpyxl 3.1 found no sheets in a Strict workbook (its relationships name no type it
knows), so the parts are rewritten to the Transitional namespaces before either opens the file.
The element names are the same in both; what Strict writes otherwise (ISO dates in cells, "start"
for "left") is read by openpyxl as it is, or only changes how MuPDF lays text out.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from pathlib import Path

STRICT_MARK = b"http://purl.oclc.org/ooxml/"
# http://purl.oclc.org/ooxml/<area>/<name>[/<relationship type>]: every Strict namespace and
# relationship type has this shape (ECMA-376 Part 1, annex A; the ones below are those in use).
STRICT_URI = re.compile(rb"http://purl\.oclc\.org/ooxml/(\w+)/(\w+)(?:/(\w+))?")
# Strict names that Transitional spells otherwise (the rest only gain "/2006").
RENAMED = {b"extendedProperties": b"extended-properties", b"customProperties": b"custom-properties"}
TRANSITIONAL = b"http://schemas.openxmlformats.org/"
XML_PARTS = (".xml", ".rels", ".vml")


def transitional_uri(match: re.Match[bytes]) -> bytes:
    area, name, kind = match.group(1), match.group(2), match.group(3)
    if area == b"officeDocument" and name == b"relationships":
        tail = b"/" + RENAMED.get(kind, kind) if kind else b""
        return TRANSITIONAL + b"officeDocument/2006/relationships" + tail
    whole = TRANSITIONAL + area + b"/2006/" + RENAMED.get(name, name)
    return whole + (b"/" + kind if kind else b"")


def transitional_xml(data: bytes) -> bytes:
    """One XML part with its Strict namespaces (and relationship types) made Transitional."""
    return STRICT_URI.sub(transitional_uri, data) if STRICT_MARK in data else data


def is_strict(archive: zipfile.ZipFile) -> bool:
    """Whether a package is Strict: its root relationships name the main part in a Strict type."""
    try:
        return STRICT_MARK in archive.read("_rels/.rels")
    except KeyError:
        return False


def transitional_package(archive: zipfile.ZipFile) -> bytes:
    """The whole package again, every XML part made Transitional, the others copied as they are.
    Held in memory: the callers checked the unpacked size first (formats.check_zip,
    xlsx.check_container)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as copy:
        for info in archive.infolist():
            if info.is_dir():
                continue
            data = archive.read(info)
            if info.filename.lower().endswith(XML_PARTS):
                data = transitional_xml(data)
            copy.writestr(info.filename, data)
    return out.getvalue()


def transitional_bytes(path: Path) -> bytes | None:
    """The file as a Transitional package if it is a Strict one; None for any other file (a
    Transitional package, or something that is no zip: its reader says what it is)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return transitional_package(archive) if is_strict(archive) else None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error):
        return None
