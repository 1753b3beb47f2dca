"""HTML read through glm1m shows its escaped text as a browser shows it: MuPDF 1.28.5 decodes
character references twice (`&amp;lt;` read "<", `AT&amp;amp;T` "AT&T"; issue 33, seen in
Python-Markdown's test pages), and reflow.py writes each shown "&" so that it survives."""

from __future__ import annotations

from pathlib import Path

import pytest

from glm1m.documents.formats import read_document
from glm1m.documents.reflow import decoded_once


def read_html(tmp_path: Path, body: str, suffix: str = ".html") -> str:
    page = tmp_path / f"page{suffix}"
    page.write_text(f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>t</title></head>"
                    f"<body>{body}</body></html>", encoding="utf-8")
    return "\n".join(p.text for p in read_document(page).pages)


# (the page's body, what a browser shows), each case once through the whole reader.
SHOWN = [
    ("<p>AT&amp;amp;T &amp;lt;</p>", "AT&amp;T &lt;"),
    ("<p><code>&amp;lt;</code> and <code>&amp;amp;</code></p>", "&lt; and &amp;"),
    ("<p>AT&T, a & b, &foo; and a&amp;b</p>", "AT&T, a & b, &foo; and a&b"),
    ("<p>x&nbsp;y &copy; &copy 2026</p>", "x\xa0y © © 2026"),
    ("<p>&#65;&#x42; &#38;#65; &amp;#x42; &#150;</p>", "AB &#65; &#x42; –"),
    ("<pre>&lt;tag&gt; a&amp;lt;b a&b</pre>", "<tag> a&lt;b a&b"),
    ("<p>中文&amp;amp;中文，&amp;lt;标签&amp;gt;</p>", "中文&amp;中文，&lt;标签&gt;"),
    ("<p>&amp;amp;amp; &amp;nbsp; &amp;copy;</p>", "&amp;amp; &nbsp; &copy;"),
    # an address written as references to hide it (Markdown's "automatic links")
    ("<p><a href=\"&#109;&#97;&#105;&#108;&#116;&#111;:&#97;&#64;&#98;\">&#97;&#64;&#98;</a>"
     " shown as <code>&amp;#97;&amp;#64;&amp;#98;</code></p>", "a@b shown as &#97;&#64;&#98;"),
    # sloppy HTML: unclosed <p> and <li>, an attribute holding ">" and "&amp;", a comment
    ("<p>one &amp;lt;<p title=\"a>b&amp;c\">two &amp;gt;<!-- &amp;lt; --><ul><li>&amp;amp;",
     "one &lt;\n\ntwo &gt;\n\n•  &amp;"),
]


@pytest.mark.parametrize(("body", "shown"), SHOWN)
def test_html_text_reads_as_a_browser_shows_it(tmp_path: Path, body: str, shown: str) -> None:
    assert read_html(tmp_path, body) == shown


def test_an_xhtml_file_reads_the_same(tmp_path: Path) -> None:
    body = "<h1>&amp;lt;h1&amp;gt;</h1><p>AT&amp;amp;T<br/>&lt;br/&gt;</p>"
    assert read_html(tmp_path, body, ".xhtml") == "&lt;h1&gt;\n\nAT&amp;T\n<br/>"


def test_a_heading_with_references_names_its_section(tmp_path: Path) -> None:
    page = tmp_path / "h.html"
    page.write_text("<h1>Using &amp;lt;pre&amp;gt;</h1><p>a</p><h1>R&amp;amp;D</h1><p>b</p>",
                    encoding="utf-8")
    assert [p.location for p in read_document(page).pages] == [
        "§ 1 · Using &lt;pre&gt; · ¶ 1", "§ 2 · R&amp;D · ¶ 1"]


def test_raw_text_is_decoded_once_and_tags_stay_as_written() -> None:
    # <xmp> and <style> are never decoded by HTML, and MuPDF decodes them once: escaped once.
    assert decoded_once("<xmp>&lt; a&b</xmp>") == "<xmp>&amp;lt; a&amp;b</xmp>"
    assert decoded_once("<style>a::after{content:'&'}</style>") == "<style>a::after{content:'&amp;'}</style>"
    # tags, attributes and comments are left alone; a reference to anything but "&" too
    kept = "<a href=\"?a=1&amp;b=2\" title='x>y'>&lt;&copy;</a><!-- a&b -->"
    assert decoded_once(kept) == kept
    assert decoded_once("a&b &amp; &#38; &ampx") == "a&amp;amp;b &amp;amp; &amp;amp; &amp;amp;x"
