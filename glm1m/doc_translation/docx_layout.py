"""DOCX cut into sections paragraph by paragraph (the body, each table cell's paragraphs, headers
and footers) and written back with every other byte of the package as it was.

The XML is edited in place, not parsed and serialised again, so the document's own prefixes,
namespaces and attributes stay as Word wrote them (documents/docx.py does the same for tables).
A paragraph's text is its w:t elements' text, translated as a whole; the translation goes into
its first w:t and the others are emptied, so the paragraph keeps its properties and its first
run's formatting. A paragraph whose runs were formatted differently (bold or italic inside it, a
link over part of it) loses that, and their number is said. A section the model fails on keeps
its text behind a visible "⚠ glm1m: not translated: …" (Word comments would need comments.xml,
its relationship and content type added: left for later). Footnotes, endnotes and comments are
not translated, and said so.
"""

from __future__ import annotations

import html
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from glm1m.catalog import Said, said
from glm1m.doc_translation.sections import Section, mark, translation
from glm1m.documents.docx import main_part
from glm1m.errors import DocumentError
from glm1m.translation.fanout import Result

MAIN_NS = re.compile(r'xmlns(?::([\w.-]+))?="(?:http://schemas\.openxmlformats\.org/wordprocessingml/'
                     r'2006/main|http://purl\.oclc\.org/ooxml/wordprocessingml/main)"')
TAG = re.compile(r"<(/?)(?:([\w.-]+):)?([\w.-]+)((?:[^>\"']|\"[^\"]*\"|'[^']*')*?)(/?)>")
HEADERS = re.compile(r"^word/(header|footer)\d*\.xml$")
UNSAID_PARTS = {"word/footnotes.xml": "doc_tr_part_footnotes", "word/endnotes.xml": "doc_tr_part_endnotes",
                "word/comments.xml": "doc_tr_part_comments"}  # catalog ids
HAS_TEXT = re.compile(r"<(?:[\w.-]+:)?t(?:\s[^>]*)?>[^<]*\S")


@dataclass(frozen=True)
class Text:
    """One w:t: its opening tag's span and its text's."""
    open_start: int
    open_end: int
    end: int  # where its text ends (its closing tag begins)
    run: int  # which run of the paragraph holds it


@dataclass
class Paragraph:
    part: str
    start: int
    texts: list[Text] = field(default_factory=list)
    formats: dict[int, str] = field(default_factory=dict)  # run -> its rPr and link, as written
    nested: bool = False


@dataclass
class DocxLayout:
    path: Path
    prefixes: dict[str, str]  # part -> the main namespace's prefix there ("w:" or "")
    parts: dict[str, str]  # part -> its XML
    paragraphs: list[Paragraph] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    notes: list[Said] = field(default_factory=list)

    def kept(self, section: Section, answer: str) -> bool:
        return True

    def fell_back(self, section: Section, answer: str) -> str:
        return answer

    def write(self, results: Mapping[int, Result], path: Path, lang: str) -> list[Said]:
        edits: dict[str, list[tuple[int, int, str]]] = {part: [] for part in self.parts}
        lost = 0
        for section, paragraph in zip(self.sections, self.paragraphs, strict=True):
            prefix = self.prefixes[paragraph.part]
            first = paragraph.texts[0]
            done = translation(results, section.index)
            if done is None:  # the original, behind a visible mark
                edits[paragraph.part].append((first.open_start, first.open_end,
                                              f'<{prefix}t xml:space="preserve">'
                                              + escape("⚠ " + mark(results.get(section.index), lang) + " ")))
                continue
            lost += len(set(paragraph.formats.values())) > 1
            text = " ".join(done.strip().split("\n"))
            edits[paragraph.part].append((first.open_start, first.end,
                                          f'<{prefix}t xml:space="preserve">{escape(text)}'))
            edits[paragraph.part] += [(t.open_end, t.end, "") for t in paragraph.texts[1:]]
        changed = {part: edited(self.parts[part], spans) for part, spans in edits.items() if spans}
        with zipfile.ZipFile(self.path) as source, zipfile.ZipFile(path, "w") as out:
            for info in source.infolist():
                data = changed[info.filename].encode("utf-8") if info.filename in changed \
                    else source.read(info)
                out.writestr(info, data, compress_type=info.compress_type)
        return [said("doc_tr_docx_formatting", count=lost)] if lost else []


def edited(xml: str, spans: list[tuple[int, int, str]]) -> str:
    for start, end, text in sorted(spans, reverse=True):
        xml = xml[:start] + text + xml[end:]
    return xml


def paragraphs_of(part: str, xml: str, prefix: str) -> list[Paragraph]:
    """Every innermost paragraph with text, in order; an outer one (a text box's anchor) only
    when it has text of its own outside the nested ones."""
    name = prefix.rstrip(":")
    found: list[Paragraph] = []
    open_: list[Paragraph] = []
    run = hyperlink = 0
    in_run = False
    rpr_start: int | None = None
    text_open: tuple[int, int] | None = None
    for tag in TAG.finditer(xml):
        closing, ns, local, _, empty = tag.groups()
        if (ns or "") != name:
            continue
        if local == "p" and not empty:
            if closing and open_:
                found.append(open_.pop())
            elif not closing:
                if open_:
                    open_[-1].nested = True
                open_.append(Paragraph(part, tag.start()))
        elif not open_:
            continue
        elif local == "hyperlink" and not empty:
            hyperlink += -1 if closing else 1
        elif local == "r" and not empty:
            in_run = not closing
            run += 0 if closing else 1
        elif local == "rPr" and in_run and not empty:
            if closing and rpr_start is not None:
                open_[-1].formats.setdefault(run, xml[rpr_start:tag.start()] + f"|{hyperlink > 0}")
            rpr_start = None if closing else tag.end()
        elif local == "t" and not empty:
            if closing and text_open is not None:
                open_[-1].texts.append(Text(text_open[0], text_open[1], tag.start(), run))
                text_open = None
            elif not closing:
                text_open = (tag.start(), tag.end())
    kept = []
    for paragraph in sorted(found, key=lambda p: p.start):
        text = paragraph_text(xml, paragraph)
        if not text.strip():
            continue
        with_text = {t.run for t in paragraph.texts if xml[t.open_end:t.end].strip()}
        paragraph.formats = {r: paragraph.formats.get(r, f"|{False}") for r in with_text}
        kept.append(paragraph)
    return kept


def paragraph_text(xml: str, paragraph: Paragraph) -> str:
    return "".join(html.unescape(xml[t.open_end:t.end]) for t in paragraph.texts)


def read_docx_layout(path: Path) -> DocxLayout:
    try:
        with zipfile.ZipFile(path) as archive:
            main = main_part(archive)
            names = archive.namelist()
            wanted = [main] + sorted(n for n in names if HEADERS.match(n))
            parts = {name: archive.read(name).decode("utf-8") for name in wanted}
            unsaid = [said(key) for name, key in UNSAID_PARTS.items()
                      if name in names and HAS_TEXT.search(archive.read(name).decode("utf-8", "replace"))]
    except (zipfile.BadZipFile, KeyError, UnicodeDecodeError, OSError, ValueError) as error:
        raise DocumentError(key="doc_tr_docx_unreadable", name=path.name, reason=str(error)) from error
    prefixes = {}
    for name, xml in parts.items():
        ns = MAIN_NS.search(xml)
        prefixes[name] = f"{ns.group(1)}:" if ns and ns.group(1) else ""
    layout = DocxLayout(path, prefixes, parts)
    nested = 0
    for name, xml in parts.items():
        for paragraph in paragraphs_of(name, xml, prefixes[name]):
            if paragraph.nested:
                nested += 1  # its own text stays: the nested paragraphs are translated
                continue
            layout.sections.append(Section(len(layout.sections), paragraph_text(xml, paragraph),
                                           paragraph_text(xml, paragraph)))
            layout.paragraphs.append(paragraph)
    if nested:
        layout.notes.append(said("doc_tr_docx_nested", count=nested))
    if unsaid:
        layout.notes.append(said("doc_tr_docx_unsaid", parts=unsaid))
    if not layout.sections:
        raise DocumentError(key="doc_tr_nothing", name=path.name)
    return layout
