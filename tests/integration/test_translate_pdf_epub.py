"""`glm1m translate FILE.pdf|.epub` on the real demo server through the identity proxy (the
server reads every prompt and generates; the answer handed back is the section itself), so the
output must equal the input element for element: a PDF cut from shared-mime-info's real
specification (each page's text, its images and links; then --bilingual, the pages alternating),
and an EPUB made at test time from libtasn1's real HTML reference (every chapter's tags in order,
its text, every other part byte for byte, `mimetype` first and stored)."""

from __future__ import annotations

import html
import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from glm1m.doc_translation.html_layout import tags
from glm1m.doc_translation.pdf_blocks import read_blocks
from glm1m.doc_translation.prompt import GLOSSARY_ASK
from glm1m.documents.ocr import OcrOptions
from tests.conftest import ModelServer
from tests.integration.test_summarize_set import glm1m
from tests.support.identity_proxy import IdentityProxy
from tests.support.service import free_port

pytestmark = pytest.mark.server
SPEC = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")
REFERENCE = Path("/usr/share/doc/libtasn1-doc/reference")
CHAPTERS = ("index.html", "ch01.html", "api-index-full.html")
SUMMARY = re.compile(r"(\d+) of (\d+) sections translated")


@pytest.fixture(scope="module")
def identity(model_server: ModelServer) -> Iterator[IdentityProxy]:
    proxy = IdentityProxy(model_server.root, free_port())
    proxy.start()
    yield proxy
    proxy.close()


def translate(path: Path, out: Path, proxy: IdentityProxy, tmp_path: Path, *options: str) -> int:
    env = {**os.environ, "GLM1M_DATA_DIR": str(tmp_path / "data")}
    done = glm1m("translate", str(path), "--to", "French", "-o", str(out), "--max-tokens", "8",
                 "--concurrency", "8", "--base-url", f"{proxy.url}/v1", *options, env=env)
    assert done.returncode == 0, done.stderr  # the identity answer keeps every section
    found = SUMMARY.search(done.stderr)
    assert found and found.group(1) == found.group(2), done.stderr
    # Every section went as the server's token ids (the document part tokenized once, on
    # /tokenize of the real server), not as chat that vLLM templates again each time.
    ask = GLOSSARY_ASK.split(",")[0]
    sections = [body for body, _ in proxy.journal
                if not str((body.get("messages") or [{}])[-1].get("content")).startswith(ask)]
    assert sections and all(isinstance(body.get("prompt"), list) for body in sections)
    return int(found.group(2))


def page_texts(path: Path) -> list[str]:
    """Each page's blocks as glm1m reads them, spaces and hyphens out (a line broken elsewhere)."""
    found = read_blocks(path, OcrOptions())
    pages = [""] * found.pages
    for block in found.blocks:
        pages[block.page] += re.sub(r"[\s-]", "", block.text)
    return pages


def test_a_real_pdf_comes_back_block_for_block_and_bilingual_alternates(identity, tmp_path: Path) -> None:
    assert SPEC.is_file(), "`make system-tools` installs shared-mime-info"
    src = tmp_path / "spec.pdf"
    with pymupdf.open(SPEC) as whole:
        whole.select([0, 1, 2])  # the title page, a page of sections, one of lists and paths
        whole.save(src)
    out = tmp_path / "spec.fr.pdf"
    total = translate(src, out, identity, tmp_path)
    assert total == sum(1 for _ in read_blocks(src, OcrOptions()).blocks) > 20
    assert page_texts(out) == page_texts(src)
    with pymupdf.open(src) as before, pymupdf.open(out) as after:
        assert after.page_count == before.page_count
        for old, new in zip(before, after, strict=True):
            assert len(new.get_images()) == len(old.get_images())
            assert [k.get("uri") for k in new.get_links()] == [k.get("uri") for k in old.get_links()]
    both = tmp_path / "spec.both.pdf"
    translate(src, both, identity, tmp_path, "--bilingual")
    texts, original = page_texts(both), page_texts(src)
    assert texts == [page for page in original for _ in (0, 1)]  # original, translation, in turn


def make_book(path: Path) -> Path:
    pages = "".join(f'<item id="p{i}" href="{name}" media-type="application/xhtml+xml"/>'
                    for i, name in enumerate(CHAPTERS))
    images = sorted(REFERENCE.glob("*.png"))
    pictures = "".join(f'<item id="i{i}" href="{p.name}" media-type="image/png"/>'
                       for i, p in enumerate(images))
    spine = "".join(f'<itemref idref="p{i}"/>' for i in range(len(CHAPTERS)))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        z.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:'
                   'names:tc:opendocument:xmlns:container"><rootfiles><rootfile '
                   'full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                   '</rootfiles></container>')
        z.writestr("OEBPS/content.opf", '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" '
                   'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
                   '<dc:title>libtasn1</dc:title><dc:identifier id="id">libtasn1</dc:identifier>'
                   f'<dc:language>en</dc:language></metadata><manifest>{pages}{pictures}<item id="css" '
                   f'href="style.css" media-type="text/css"/></manifest><spine>{spine}</spine></package>')
        for name in (*CHAPTERS, "style.css", *(p.name for p in images)):
            z.writestr(f"OEBPS/{name}", (REFERENCE / name).read_bytes())
    return path


def test_an_epub_made_from_a_real_manual_comes_back_element_for_element(identity, tmp_path: Path) -> None:
    assert (REFERENCE / "index.html").is_file(), "`make system-tools` installs libtasn1-doc"
    src = make_book(tmp_path / "libtasn1.epub")
    out = tmp_path / "libtasn1.fr.epub"
    assert translate(src, out, identity, tmp_path) > 30
    with zipfile.ZipFile(src) as before, zipfile.ZipFile(out) as after:
        assert after.infolist()[0].filename == "mimetype"
        assert after.infolist()[0].compress_type == zipfile.ZIP_STORED
        assert sorted(after.namelist()) == sorted(before.namelist())
        for name in before.namelist():
            old, new = before.read(name), after.read(name)
            if name.removeprefix("OEBPS/") not in CHAPTERS:
                assert new == old, name  # images, stylesheet, package file: as stored
                continue
            old_page, new_page = old.decode("utf-8"), new.decode("utf-8")
            assert tags(new_page) == tags(old_page), name  # every element, attribute and link
            assert words(new_page) == words(old_page), name  # and its text


def words(page: str) -> list[str]:
    """The page's text between its tags, entities read, spaces evened out."""
    return html.unescape(re.sub(r"<[^>]*>", " ", page)).split()
