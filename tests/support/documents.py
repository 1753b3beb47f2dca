"""Documents of every format glm1m reads, made by the tests (stdlib zipfile and PyMuPDF), so no
binary files live in the repo: DOCX and EPUB from minimal XML, a scanned PDF from a rendered page."""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pymupdf

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
DOCX_TYPES = ('<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
              'package/2006/content-types"><Default Extension="rels" ContentType="application/'
              'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
              'ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType='
              '"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
              '</Types>')
RELS = ('<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
        'package/2006/relationships">{}</Relationships>')
OFFICE_DOCUMENT = ('<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                   'relationships/officeDocument" Target="word/document.xml"/>')

# (heading level, text): level 0 is a paragraph, 1-6 a heading of that level.
Outline = list[tuple[int, str]]


def make_docx(path: Path, outline: Outline) -> Path:
    """A Word document whose headings use the built-in Heading N styles."""
    def paragraph(level: int, text: str) -> str:
        style = f'<w:pPr><w:pStyle w:val="Heading{level}"/></w:pPr>' if level else ""
        return f'<w:p>{style}<w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'

    return docx_with_body(path, "".join(paragraph(level, text) for level, text in outline))


def docx_with_body(path: Path, body: str, root: str = f'xmlns:w="{W}"') -> Path:
    """The smallest Word document MuPDF opens, `body` (WordprocessingML) as its text; `root`: the
    main part's namespace declarations and attributes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", DOCX_TYPES)
        z.writestr("_rels/.rels", RELS.format(OFFICE_DOCUMENT))
        z.writestr("word/_rels/document.xml.rels", RELS.format(""))
        z.writestr("word/document.xml", f'<?xml version="1.0" encoding="UTF-8"?><w:document '
                                        f'{root}><w:body>{body}</w:body></w:document>')
    return path


def xhtml(title: str, body: str) -> str:
    return (f'<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
            f'<head><title>{escape(title)}</title></head><body>{body}</body></html>')


def html_body(outline: Outline) -> str:
    return "".join(f"<h{level}>{escape(text)}</h{level}>" if level else f"<p>{escape(text)}</p>"
                   for level, text in outline)


def make_epub(path: Path, chapters: list[tuple[str, list[str]]]) -> Path:
    """An EPUB 3 book: one XHTML file per chapter (an <h1> and its paragraphs), a nav table of
    contents naming them."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")  # first and stored
        z.writestr("META-INF/container.xml", '<?xml version="1.0"?><container version="1.0" xmlns='
                   '"urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path='
                   '"OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>'
                   '</container>')
        items = "".join(f'<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>'
                        for i in range(len(chapters)))
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(chapters)))
        z.writestr("OEBPS/content.opf", '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/'
                   'opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/'
                   'elements/1.1/"><dc:title>Book</dc:title><dc:identifier id="id">glm1m-test'
                   '</dc:identifier><dc:language>en</dc:language></metadata><manifest><item id="nav" '
                   'href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
                   f'{items}</manifest><spine>{spine}</spine></package>')
        links = "".join(f'<li><a href="c{i}.xhtml">{escape(t)}</a></li>' for i, (t, _) in enumerate(chapters))
        z.writestr("OEBPS/nav.xhtml", xhtml("Contents", '<nav xmlns:epub="http://www.idpf.org/2007/ops"'
                                                        f' epub:type="toc"><ol>{links}</ol></nav>'))
        for i, (title, paragraphs) in enumerate(chapters):
            body = html_body([(1, title)] + [(0, p) for p in paragraphs])
            z.writestr(f"OEBPS/c{i}.xhtml", xhtml(title, body))
    return path


def make_html(path: Path, outline: Outline) -> Path:
    path.write_text(f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>t</title></head>"
                    f"<body>{html_body(outline)}</body></html>", encoding="utf-8")
    return path


def make_fb2(path: Path, sections: list[tuple[str, list[str]]]) -> Path:
    body = "".join(f"<section><title><p>{escape(t)}</p></title>{''.join(f'<p>{escape(p)}</p>' for p in ps)}"
                   f"</section>" for t, ps in sections)
    path.write_text('<?xml version="1.0" encoding="utf-8"?><FictionBook xmlns="http://www.gribuser.ru/'
                    'xml/fictionbook/2.0"><description><title-info><book-title>B</book-title>'
                    f'</title-info></description><body>{body}</body></FictionBook>', encoding="utf-8")
    return path


def text_page(doc: pymupdf.Document, text: str) -> None:
    """A page with `text` in a text layer (Chinese through MuPDF's built-in CJK font)."""
    page = doc.new_page()
    page.insert_textbox(page.rect + (54, 54, -54, -54), text, fontsize=16, fontname="china-s")


def make_scanned_pdf(path: Path, pages: list[str], text_pages: tuple[int, ...] = (), dpi: int = 200
                     ) -> Path:
    """A PDF whose pages are images of text (rendered, then pasted into a page without a text
    layer), as a scanner makes them; the 0-based pages in `text_pages` keep a text layer."""
    source = pymupdf.open()
    for text in pages:
        text_page(source, text)
    out = pymupdf.open()
    for index, page in enumerate(source):
        if index in text_pages:
            out.insert_pdf(source, from_page=index, to_page=index)
            continue
        image = out.new_page(width=page.rect.width, height=page.rect.height)
        image.insert_image(image.rect, pixmap=page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY))
    out.save(path)
    out.close()
    source.close()
    return path
