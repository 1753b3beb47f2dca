"""An EPUB translated chapter by chapter, the same format back: each XHTML document of the book
(the spine's chapters in reading order, then the others the manifest lists, the nav table of
contents among them) is cut into sections by html_layout.py's machinery and written back with
every byte outside them as it was; every other part of the book (images, CSS, fonts, the
package file) is copied as stored. The zip is written again with `mimetype` first and stored
uncompressed, as the EPUB container requires (OCF 3.0, 4.3).

A failed section is kept in the original behind an XML comment, as in HTML. The package's
metadata (title, author) and an EPUB 2 toc.ncx are not translated, and said so.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree

from glm1m.catalog import Said, said
from glm1m.doc_translation.html_layout import HtmlLayout, html_layout_of
from glm1m.doc_translation.sections import Section
from glm1m.errors import DocumentError
from glm1m.translation.fanout import Result

CONTAINER = "META-INF/container.xml"
MIMETYPE = "mimetype"
XHTML = {"application/xhtml+xml", "text/html"}
NCX = "application/x-dtbncx+xml"


@dataclass(frozen=True)
class Chapter:
    name: str  # its path inside the zip
    layout: HtmlLayout
    first: int  # the book's index of its first section


@dataclass
class EpubLayout:
    path: Path
    chapters: list[Chapter] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    notes: list[Said] = field(default_factory=list)

    def chapter_of(self, section: Section) -> Chapter:
        return next(c for c in reversed(self.chapters) if c.first <= section.index)

    def kept(self, section: Section, answer: str) -> bool:
        return self.chapter_of(section).layout.kept(section, answer)

    def fell_back(self, section: Section, answer: str) -> str:
        return self.chapter_of(section).layout.fell_back(section, answer)

    def write(self, results: Mapping[int, Result], path: Path, lang: str) -> list[Said]:
        pages, lost = {}, 0
        for chapter in self.chapters:
            own = {s.index: results[s.index + chapter.first] for s in chapter.layout.sections
                   if s.index + chapter.first in results}
            pages[chapter.name], chapter_lost = chapter.layout.rendered(own, lang)
            lost += chapter_lost
        with zipfile.ZipFile(self.path) as source, zipfile.ZipFile(path, "w") as out:
            out.writestr(zipfile.ZipInfo(MIMETYPE), source.read(MIMETYPE) if MIMETYPE in source.namelist()
                         else b"application/epub+zip", compress_type=zipfile.ZIP_STORED)
            for info in source.infolist():
                if info.filename == MIMETYPE:
                    continue
                data = pages[info.filename].encode("utf-8") if info.filename in pages else source.read(info)
                out.writestr(info, data, compress_type=info.compress_type)
        return [said("doc_tr_html_tags_lost", count=lost)] if lost else []


def documents_of(archive: zipfile.ZipFile) -> tuple[list[str], bool]:
    """The book's XHTML documents in reading order (the spine, then the rest of the manifest),
    as paths inside the zip, and whether it has a toc.ncx."""
    root = ElementTree.fromstring(archive.read(CONTAINER))
    package = next(e.get("full-path", "") for e in root.iter() if e.tag.endswith("rootfile"))
    opf = ElementTree.fromstring(archive.read(package))
    base = posixpath.dirname(package)
    items = {e.get("id"): e for e in opf.iter() if e.tag.endswith("}item") or e.tag == "item"}
    spine = [e.get("idref") for e in opf.iter() if e.tag.endswith("itemref")]
    ordered = [items[i] for i in spine if i in items] + [e for i, e in items.items() if i not in spine]
    names = list(dict.fromkeys(posixpath.normpath(posixpath.join(base, e.get("href", "")))
                               for e in ordered if e.get("media-type") in XHTML))
    present = set(archive.namelist())
    return [n for n in names if n in present], any(e.get("media-type") == NCX for e in items.values())


def read_epub_layout(path: Path) -> EpubLayout:
    layout = EpubLayout(path)
    outside = 0
    try:
        with zipfile.ZipFile(path) as archive:
            names, ncx = documents_of(archive)
            for name in names:
                chapter = html_layout_of(archive.read(name).decode("utf-8-sig"))
                layout.chapters.append(Chapter(name, chapter, len(layout.sections)))
                layout.sections += [Section(len(layout.sections) + s.index, s.text, s.source, s.fallback)
                                    for s in chapter.sections]
                outside += chapter.outside
    except (zipfile.BadZipFile, KeyError, StopIteration, ElementTree.ParseError, UnicodeDecodeError,
            OSError, ValueError) as error:
        raise DocumentError(key="doc_tr_epub_unreadable", name=path.name, reason=str(error) or
                            type(error).__name__) from error
    if outside:
        layout.notes.append(said("doc_tr_html_outside", count=outside))
    layout.notes.append(said("doc_tr_epub_metadata", ncx=said("doc_tr_epub_ncx") if ncx else ""))
    if not layout.sections:
        raise DocumentError(key="doc_tr_nothing", name=path.name)
    return layout
