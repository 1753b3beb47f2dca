"""An EPUB translated chapter by chapter (glm1m/doc_translation/epub_layout.py) with the scripted
model, which keeps every tag and upper-cases the text around them: the output is the same book
with the chapters' text upper-cased and every tag, link, image, stylesheet and the package file
as they were, `mimetype` first and stored; a failed section is kept and marked, and a rerun asks
only it; what is not translated (metadata, toc.ncx) is said."""

from __future__ import annotations

import asyncio
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from glm1m.doc_translation.html_layout import tags
from glm1m.doc_translation.job import DocJob, run_document
from glm1m.doc_translation.prompt import GLOSSARY_ASK
from glm1m.documents.formats import read_document
from glm1m.errors import ServerBusy
from glm1m.translation.job import checkpoint_path
from tests.support.scripted_llm import ScriptedLlm, user_text

ASK = GLOSSARY_ASK.split(",")[0]
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))  # never read: only copied
OPF = ('<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
       'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Manual'
       '</dc:title><dc:identifier id="id">glm1m-epub</dc:identifier><dc:language>en</dc:language></metadata>'
       '<manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
       '<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>'
       '<item id="css" href="style.css" media-type="text/css"/>'
       '<item id="img" href="img/logo.png" media-type="image/png"/>'
       '<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>'
       '<item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/></manifest>'
       '<spine toc="ncx"><itemref idref="c1"/><itemref idref="c2"/></spine></package>')


def page(title: str, body: str) -> str:
    return ('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            f'<head><title>{title}</title><link rel="stylesheet" href="../style.css"/></head>\n'
            f'<body>\n{body}\n</body></html>\n')


CHAPTERS = {
    "OEBPS/text/one.xhtml": page("One", '<h1 id="start">Getting started</h1>\n<p>Install the <em>tool</em> '
                                 'and read <a href="two.xhtml#use">the usage</a>.</p>\n'
                                 '<p><img src="../img/logo.png" alt="logo"/></p>\n<p>Fish &amp; chips.</p>'),
    "OEBPS/text/two.xhtml": page("Two", '<h1 id="use">Usage</h1>\n<ul><li>first step</li><li>second step</li>'
                                 '</ul>\n<pre>code stays</pre>\n<p>Last words.</p>'),
    "OEBPS/nav.xhtml": page("Contents", '<nav xmlns:epub="http://www.idpf.org/2007/ops" epub:type="toc"><ol>'
                            '<li><a href="text/one.xhtml">Getting started</a></li>'
                            '<li><a href="text/two.xhtml">Usage</a></li></ol></nav>'),
}
OTHERS = {"META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:'
          'tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
          '"application/oebps-package+xml"/></rootfiles></container>',
          "OEBPS/content.opf": OPF, "OEBPS/style.css": "h1 { color: navy }",
          "OEBPS/toc.ncx": '<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/"><navMap/></ncx>'}


def make_book(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        for name, text in {**OTHERS, **CHAPTERS}.items():
            z.writestr(name, text)
        z.writestr("OEBPS/img/logo.png", PNG)
    return path


def keep_tags_upper(messages: list) -> str:
    text = user_text(messages)
    if text.startswith(ASK):
        return ""
    return re.sub(r"(^|>)([^<]*)", lambda m: m.group(1) + m.group(2).upper(), text)


def run(path: Path, llm: ScriptedLlm, out: Path, notes: list | None = None, **job: object):
    said = notes if notes is not None else []
    return asyncio.run(run_document(path, DocJob("French", **job), llm, out, on_note=said.append))


def test_an_epub_keeps_its_chapters_links_images_and_container(tmp_path: Path) -> None:
    src, out, notes = make_book(tmp_path / "manual.epub"), tmp_path / "manual.fr.epub", []
    summary = run(src, ScriptedLlm(reply=keep_tags_upper), out, notes)
    # one: title, h1, p, p; two: title, h1, li, li, p; nav: title, li, li
    assert summary.total == 12 and summary.complete and summary.notes == ()
    with zipfile.ZipFile(src) as before, zipfile.ZipFile(out) as after:
        first = after.infolist()[0]
        assert (first.filename, first.compress_type) == ("mimetype", zipfile.ZIP_STORED)
        assert sorted(after.namelist()) == sorted(before.namelist())
        for name in [*OTHERS, "OEBPS/img/logo.png"]:
            assert after.read(name) == before.read(name), name
        for name, original in CHAPTERS.items():
            written = after.read(name).decode("utf-8")
            ElementTree.fromstring(written.encode())  # still well-formed XML
            assert tags(written) == tags(original)  # every tag and attribute, in order
        one = after.read("OEBPS/text/one.xhtml").decode()
        assert '<h1 id="start">GETTING STARTED</h1>' in one and "FISH &amp; CHIPS." in one
        assert 'INSTALL THE <em>TOOL</em> AND READ <a href="two.xhtml#use">THE USAGE</a>.' in one
        assert "<pre>code stays</pre>" in after.read("OEBPS/text/two.xhtml").decode()
        assert '<a href="text/two.xhtml">USAGE</a>' in after.read("OEBPS/nav.xhtml").decode()
    assert [(n.key, bool(n.fields["ncx"])) for n in notes if n.key == "doc_tr_epub_metadata"] == [
        ("doc_tr_epub_metadata", True)]
    text = "\n".join(p.text for p in read_document(out).pages)  # MuPDF opens the book written
    assert "GETTING STARTED" in text and "LAST WORDS." in text


def test_a_failed_section_is_marked_in_its_chapter_and_a_rerun_asks_only_it(tmp_path: Path) -> None:
    src, out = make_book(tmp_path / "manual.epub"), tmp_path / "manual.fr.epub"
    broken = ScriptedLlm(reply=keep_tags_upper, fail=lambda text: ServerBusy(
        key="server_busy", status=503) if text == "second step" else None)
    first = run(src, broken, out, retries=0)
    assert (first.translated, first.failed) == (11, 1)
    with zipfile.ZipFile(out) as z:
        two = z.read("OEBPS/text/two.xhtml").decode()
    assert "<li><!-- glm1m: not translated: " in two and " -->second step</li>" in two
    ElementTree.fromstring(two.encode())
    again = ScriptedLlm(reply=keep_tags_upper)
    second = run(src, again, out)
    assert [c.text for c in again.calls] == ["second step"] and second.complete
    with zipfile.ZipFile(out) as z:
        assert "<li>SECOND STEP</li>" in z.read("OEBPS/text/two.xhtml").decode()
    assert not checkpoint_path(out).exists()


def test_a_broken_epub_is_said_in_one_sentence(tmp_path: Path) -> None:
    src = tmp_path / "broken.epub"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("mimetype", "application/epub+zip")
    try:
        run(src, ScriptedLlm(), tmp_path / "out.epub")
    except Exception as error:  # noqa: BLE001 - the sentence is what is checked
        assert getattr(error, "key", None) == "doc_tr_epub_unreadable"
        assert "broken.epub cannot be read as an EPUB" in error.in_language("en")
    else:
        raise AssertionError("a book without its container was translated")
