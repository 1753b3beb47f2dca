"""The limits a shared server needs on one upload's reading work (glm1m/documents/limits.py), each
with a file made here that went past it before (issue 33, item 3): a zip bomb, a DOCX that lays out
to thousands of pages, a PDF of scanned pages, a text too long to count at once, a user reading
more documents at once than the setting allows. Each refusal names the setting that raises it."""

from __future__ import annotations

import asyncio
import random
import struct
import time
import zipfile
import zlib
from pathlib import Path

import pymupdf
import pytest

from glm1m.catalog import EN, ZH
from glm1m.documents import limits
from glm1m.documents.answer import open_document
from glm1m.documents.budget import measure
from glm1m.documents.formats import ReadOptions, read_document
from glm1m.documents.ocr import OcrMode, OcrOptions
from glm1m.documents.pages import DocumentText, Kind, Page
from glm1m.documents.shelf import Shelf
from glm1m.documents.through_shelf import key_of, read_and_keep
from glm1m.errors import DocumentError, LimitReached
from glm1m.progress import Progress, Stage
from glm1m.settings import Settings
from tests.support.documents import DOCX_TYPES, OFFICE_DOCUMENT, RELS, docx_with_body
from tests.support.pdfs import make_pdf
from tests.support.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.timeout(60)
MIB = 1024 * 1024


def zip_by_hand(path: Path, parts: dict[str, bytes], zeros: str, zeros_mib: int) -> Path:
    """A zip of `parts` and one member `zeros` of `zeros_mib` MiB of zeros, deflated, with true
    sizes and CRC. Written by hand so no gigabyte is deflated: a deflate stream reset at every MiB
    (a full flush) gives the same ~1 KB for each, as a zip bomb's are made."""
    mib = bytes(MIB)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = packer.compress(mib) + packer.flush(zlib.Z_FULL_FLUSH)
    end = packer.flush()
    crc = 0
    for _ in range(zeros_mib):
        crc = zlib.crc32(mib, crc)
    members = []
    for name, data in parts.items():
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        members.append((name, zlib.crc32(data), packer.compress(data) + packer.flush(), len(data)))
    members.append((zeros, crc, None, zeros_mib * MIB))
    local, central = bytearray(), bytearray()
    for name, crc, packed, size in members:
        packed_size = len(block) * zeros_mib + len(end) if packed is None else len(packed)
        head = struct.pack("<HHHHHIIIHH", 20, 0, 8, 0, 0x21, crc, packed_size, size, len(name), 0)
        central += (b"PK\x01\x02" + struct.pack("<H", 20) + head
                    + struct.pack("<HHHII", 0, 0, 0, 0, len(local)) + name.encode())
        local += b"PK\x03\x04" + head + name.encode()
        local += block * zeros_mib + end if packed is None else packed
    path.write_bytes(bytes(local + central + struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0)))
    return path


def docx_parts() -> dict[str, bytes]:
    return {"[Content_Types].xml": DOCX_TYPES.encode(), "_rels/.rels": RELS.format(OFFICE_DOCUMENT).encode(),
            "word/_rels/document.xml.rels": RELS.format("").encode()}


def test_the_hand_made_zip_is_one_zipfile_reads_back(tmp_path: Path) -> None:
    path = zip_by_hand(tmp_path / "small.docx", docx_parts(), "word/document.xml", 3)
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None
        assert archive.read("word/document.xml") == bytes(3 * MIB)


def test_a_docx_that_unpacks_to_1899_mb_is_refused_at_once_before_anything_is_unpacked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As the issue's: a 5.5 MB DOCX unpacking to 1,899 MB took 47.7 s and 3.8 GB, then "damaged".
    path = zip_by_hand(tmp_path / "bomb.docx", docx_parts(), "word/document.xml", 1899)
    assert path.stat().st_size < 3 * MIB

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the reader was started")

    monkeypatch.setattr("glm1m.documents.isolated.read_isolated", never)
    started = time.monotonic()
    with pytest.raises(LimitReached) as refused:
        read_document(path, ReadOptions.of(Settings(_env_file=None)))
    assert time.monotonic() - started < 1
    assert refused.value.key == "doc_unpacks_too_large"
    assert str(refused.value).startswith("bomb.docx would unpack to 1,899 MB, over the 300 MB glm1m "
                                         "unpacks for one DOCX file")
    assert str(refused.value).endswith(
        "the server's GLM1M_DOCUMENT_MAX_UNPACKED_MB setting raises the limit.")
    assert "GLM1M_DOCUMENT_MAX_UNPACKED_MB" in refused.value.in_language(ZH)


def test_a_zip_of_zeros_under_the_size_limit_is_refused_by_how_tightly_it_packs(tmp_path: Path) -> None:
    path = tmp_path / "zeros.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:  # 24 MiB of zeros: ~24 KB packed
        for name, data in docx_parts().items():
            z.writestr(name, data)
        z.writestr("word/document.xml", bytes(24 * MIB))
    with pytest.raises(LimitReached) as refused:
        read_document(path, ReadOptions.of(Settings(_env_file=None)))
    assert refused.value.key == "limit_unpack_ratio"
    assert "times its packed size, over the 100 times" in str(refused.value)
    assert str(refused.value).endswith(
        "the server's GLM1M_DOCUMENT_MAX_UNPACK_RATIO setting raises the limit.")
    # Raised, it is read: the limits are settings, not constants.
    roomy = Settings(document_max_unpack_ratio=10_000, _env_file=None)
    with pytest.raises(DocumentError) as after:
        read_document(path, ReadOptions.of(roomy))
    assert not isinstance(after.value, LimitReached)  # MuPDF's own word on 24 MiB of zeros


def test_a_zip_that_packs_as_documents_do_passes(tmp_path: Path) -> None:
    # 30 MB of paragraphs of words packs ~8 times (DOCX XML: 5 to 25 times), zeros ~1,000 times.
    words = "alpha beta gamma delta river stone house engine paper window ".split()
    rows = [f'<w:p><w:r><w:t>{" ".join(random.Random(n).choices(words, k=40))}</w:t></w:r></w:p>'
            for n in range(1000)]
    body = "".join(rows) * 100  # repeated past deflate's 32 KB window: packs as the rows do
    path = docx_with_body(tmp_path / "long.docx", body)
    with zipfile.ZipFile(path) as archive:
        unpacked = sum(member.file_size for member in archive.infolist())
    assert unpacked > 25 * MIB and unpacked / path.stat().st_size < 20
    limits.check_unpacked(path, "long.docx", "DOCX", 300, 100)  # no refusal


def many_paragraphs(path: Path, count: int) -> Path:
    words = "alpha beta gamma delta river stone house engine paper window ".split()
    body = "".join(f'<w:p><w:r><w:t>{n} {" ".join(words[(n + i) % 10] for i in range(40))}</w:t></w:r></w:p>'
                   for n in range(count))
    return docx_with_body(path, body)


def test_a_docx_past_the_page_limit_is_refused_from_mupdfs_page_count_before_its_text_is_read(
        tmp_path: Path) -> None:
    path = many_paragraphs(tmp_path / "long.docx", 2000)  # ~120 A4 pages, 0.6 MB of XML
    seen: list[Progress] = []
    with pytest.raises(LimitReached) as refused:
        read_document(path, ReadOptions(max_reflow_pages=60), on_progress=seen.append)
    assert refused.value.key == "limit_laid_out_pages"
    pages = refused.value.fields["pages"]
    assert 60 < pages < 300 and pages % limits.A4_PER_LAID_OUT_PAGE == 0
    assert str(refused.value).startswith(f"long.docx lays out to about {pages:,} A4 pages, over the "
                                         "60-page limit for one DOCX document, so its text was not read.")
    assert str(refused.value).endswith("the server's GLM1M_REFLOW_MAX_PAGES setting raises the limit.")
    assert not [p for p in seen if p.stage is Stage.READING]  # not one page's text
    assert read_document(path, ReadOptions(max_reflow_pages=pages)).pages


def test_a_pdf_past_its_page_limit_is_told_which_setting_raises_it(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "long.pdf", ["one", "two", "three"])
    with pytest.raises(DocumentError) as refused:
        read_document(path, ReadOptions(max_pages=2))
    assert str(refused.value).endswith("the server's GLM1M_PDF_MAX_PAGES setting raises the limit.")
    assert "GLM1M_PDF_MAX_PAGES 设置可提高该上限" in refused.value.in_language(ZH)


def scanned_pdf(path: Path, pages: int, text_pages: int = 0) -> Path:
    """`pages` pages that each show only a picture (no text layer), after `text_pages` of text."""
    doc = pymupdf.open()
    picture = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 32, 32), False)
    picture.set_rect(picture.irect, (200,))
    for n in range(text_pages):
        doc.new_page().insert_text((72, 72), f"page {n + 1} has text")
    for _ in range(pages):
        doc.new_page().insert_image(pymupdf.Rect(72, 72, 300, 300), pixmap=picture)
    doc.save(path)
    return path


def test_a_pdf_with_more_pages_to_ocr_than_the_limit_is_refused_before_any_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ocr(*args: object, **kwargs: object) -> None:
        raise AssertionError("OCR was started")

    monkeypatch.setattr("glm1m.documents.ocr.tessdata_dir", no_ocr)
    monkeypatch.setattr("glm1m.documents.ocr.read_pages", no_ocr)
    path = scanned_pdf(tmp_path / "archive.pdf", 12, text_pages=3)
    with pytest.raises(LimitReached) as refused:
        read_document(path, ReadOptions(ocr=OcrOptions(OcrMode.AUTO, max_pages=10)))
    assert refused.value.key == "limit_ocr_pages"
    assert str(refused.value).startswith("archive.pdf has 12 pages without a text layer to read "
                                         "with OCR, over the 10 pages OCR reads in one document, "
                                         "so none of them was read.")
    assert str(refused.value).endswith("the server's GLM1M_OCR_MAX_PAGES setting raises the limit.")
    with pytest.raises(LimitReached, match="has 15 pages without a text layer"):  # OCR of every page
        read_document(path, ReadOptions(ocr=OcrOptions(OcrMode.ALWAYS, max_pages=10)))
    # At the limit, OCR begins (here: the stand-in that says so).
    with pytest.raises(AssertionError, match="OCR was started"):
        read_document(path, ReadOptions(ocr=OcrOptions(OcrMode.AUTO, max_pages=12)))


def test_read_options_take_every_limit_from_the_settings_with_the_same_defaults() -> None:
    assert ReadOptions.of(Settings(_env_file=None)) == ReadOptions()
    options = ReadOptions.of(Settings(document_max_unpacked_mb=1, document_max_unpack_ratio=2,
                                      reflow_max_pages=3, ocr_max_pages=4, reads_per_user=5,
                                      _env_file=None))
    assert (options.max_unpacked_mb, options.max_unpack_ratio, options.max_reflow_pages,
            options.ocr.max_pages, options.reads_per_user) == (1, 2, 3, 4, 5)


def one_paragraph(chars: int) -> DocumentText:
    """A text file of one paragraph (no blank line), as the issue's 60 MB file: one section."""
    words = ("word " * (chars // 5 + 1))[:chars]
    return DocumentText("big.txt", (Page(1, words, Kind.SECTION, "", "lines 1–1"),), 1)


async def test_a_long_text_is_counted_in_pieces_of_bounded_size_that_add_up_to_it() -> None:
    llm = ScriptedLlm()
    doc = one_paragraph(1_000_000)
    budget = await measure(doc, llm, threshold=1000)
    assert len(llm.counted) == 6 and max(map(len, llm.counted)) <= limits.PIECE_CHARS
    assert "".join(llm.counted) == doc.pages[0].marked() + "\n\n"  # nothing lost or repeated
    assert all(piece.endswith("word") for piece in llm.counted[:-1])  # cut before a space
    assert budget.tokens == sum(map(llm.count, llm.counted))
    assert budget.chars == len(doc.pages[0].marked()) + 2


async def test_counting_a_long_text_reports_characters_that_move_with_each_call() -> None:
    """Issue 34, item 5: a 60 MB text is one section; its count stood at "0 of 1 sections" for
    minutes. Counted in pieces, the line counts characters, and each call moves it."""
    seen: list[Progress] = []
    doc = one_paragraph(1_000_000)
    await measure(doc, ScriptedLlm(), threshold=1000, on_progress=seen.append)
    assert [p.unit for p in seen] == ["characters"] * 6
    assert [p.done for p in seen] == sorted({p.done for p in seen})  # each call moves it
    assert seen[-1].done == seen[-1].total == len(doc.pages[0].marked()) + 2
    assert seen[0].line(EN) == f"counting tokens: {seen[0].done:,} of {seen[0].total:,} characters"
    pages = DocumentText("short.pdf", tuple(Page(n, "word " * 100, Kind.PAGE) for n in (1, 2)), 2)
    seen.clear()
    await measure(pages, ScriptedLlm(), threshold=1000, on_progress=seen.append)
    assert seen[-1].unit == "pages" and (seen[-1].done, seen[-1].total) == (2, 2)  # as before


def test_pieces_cut_at_line_ends_first_and_keep_short_texts_together() -> None:
    texts = ["a" * 10, "b" * 10, "line\n" * 10, "c" * 5]
    found = list(limits.pieces(texts, most_chars=22, most_texts=64))
    assert "".join(piece for piece, _ in found) == "".join(texts)
    assert all(len(piece) <= 22 for piece, _ in found)
    assert found[0] == ("a" * 10 + "b" * 10, 2)
    assert [piece.endswith("\n") for piece, _ in found[1:-1]] == [True] * (len(found) - 2)
    assert found[-1][1] == 4
    assert [n for _, n in limits.pieces(["x"] * 5, most_texts=2)] == [2, 4, 5]


async def test_counting_stops_once_a_document_is_past_the_token_limit() -> None:
    llm = ScriptedLlm()  # about four characters a token
    doc = one_paragraph(60_000_000)  # the 60 MB text file, 15M tokens here
    with pytest.raises(LimitReached) as refused:
        await measure(doc, llm, threshold=1000, max_tokens=10_000_000)
    counts = [llm.count(piece) for piece in llm.counted]  # ~50,000 tokens a call of 200,000 characters
    assert sum(counts[:-1]) <= 10_000_000 < sum(counts) and len(counts) == 201  # stopped once past
    assert refused.value.key == "limit_tokens"
    assert str(refused.value) == (
        "big.txt is longer than 10,000,000 tokens, the most glm1m reads in one document: counting "
        f"stopped at {sum(counts):,} tokens, 67% of the way through. Split it into smaller files and "
        "upload them one at a time; the server's GLM1M_DOCUMENT_MAX_TOKENS setting raises the limit.")


async def test_a_document_is_opened_within_the_settings_token_limit() -> None:
    llm = ScriptedLlm()
    small = Settings(document_max_tokens=10_000, _env_file=None)
    with pytest.raises(LimitReached, match="longer than 10,000 tokens"):
        await open_document(one_paragraph(400_000), llm, small, 512)
    opened = await open_document(one_paragraph(30_000), llm, small, 512)
    assert opened.budget.tokens < 10_000


def test_a_user_reads_at_most_the_settings_documents_at_once_and_a_slot_frees_when_one_ends() -> None:
    with limits.reading_slot("alice", 2, "a.pdf"), limits.reading_slot("alice", 2, "b.pdf"):
        with pytest.raises(LimitReached) as refused, limits.reading_slot("alice", 2, "c.pdf"):
            pass
        with limits.reading_slot("bob", 2, "d.pdf"):  # another user's are counted apart
            pass
    assert str(refused.value) == ("c.pdf was not read: 2 of your documents are being read now, the "
                                  "most one user's are at once. Upload it again once one of them "
                                  "is read; the server's GLM1M_READS_PER_USER setting raises the limit.")
    with pytest.raises(RuntimeError), limits.reading_slot("alice", 1, "a.pdf"):
        raise RuntimeError("the read failed")
    with limits.reading_slot("alice", 1, "c.pdf"):  # a failed read gave its slot back
        pass
    assert limits._reading == {}


async def test_a_second_document_read_at_once_by_one_user_is_refused_through_the_shelf(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gate = asyncio.Event()

    async def slow_read(path: Path, options: ReadOptions, name: str, on_progress: object
                        ) -> DocumentText:
        await gate.wait()
        return DocumentText(name, (Page(1, "text"),), 1)

    monkeypatch.setattr("glm1m.documents.through_shelf.read_document_async", slow_read)
    options = ReadOptions(reads_per_user=1)
    alice, bob = (Shelf.of(tmp_path, 100, user) for user in ("alice", "bob"))
    files = [tmp_path / name for name in ("a.pdf", "b.pdf")]
    for n, path in enumerate(files):
        path.write_bytes(b"%PDF-1.7 " + bytes([n]))
    first = asyncio.create_task(read_and_keep(alice, key_of(files[0], "a.pdf", options), files[0],
                                              "a.pdf", options))
    await asyncio.sleep(0)
    with pytest.raises(LimitReached, match="b.pdf was not read: 1 of your documents"):
        await read_and_keep(alice, key_of(files[1], "b.pdf", options), files[1], "b.pdf", options)
    other = asyncio.create_task(read_and_keep(bob, key_of(files[1], "b.pdf", options), files[1],
                                              "b.pdf", options))
    await asyncio.sleep(0)
    gate.set()
    assert (await first)[0].text.name == "a.pdf" and (await other)[0].text.name == "b.pdf"
    again = await read_and_keep(alice, key_of(files[1], "b.pdf", options), files[1], "b.pdf", options)
    assert again[0].text.name == "b.pdf"
