"""Which encoding a text file is in (a CSV, a TXT or Markdown file, an HTML page without a usable
charset), found the same way for each: a BOM; UTF-16 or UTF-32 by where their zero bytes fall;
strict UTF-8; else charset-normalizer on a sample. The whole file is then decoded with the
result, so a bad byte deep in it, or a last character cut short, gets one sentence, never a
U+FFFD in the text. Files are read in blocks: a 100 MB CSV never sits in memory whole."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from glm1m.catalog import said
from glm1m.errors import UserFacingError

ENCODING_NAMES = {"utf-8-sig": "UTF-8 with BOM", "utf-8": "UTF-8", "utf-16": "UTF-16",
                  "utf-16-le": "UTF-16LE (no BOM)", "utf-16-be": "UTF-16BE (no BOM)",
                  "utf-32": "UTF-32", "utf-32-le": "UTF-32LE (no BOM)",
                  "utf-32-be": "UTF-32BE (no BOM)", "gb18030": "GB18030 (GBK)", "big5": "Big5",
                  "cp932": "Shift_JIS (Windows-31J)", "cp949": "EUC-KR (Windows-949)",
                  "latin_1": "Latin-1 (ISO-8859-1)"}
# Longest first: the UTF-32LE BOM begins with the UTF-16LE one.
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"))
SAMPLE_BYTES = 1 << 16  # of lines with non-ASCII bytes: enough for the detector, read at once
ASCII_CONTEXT_BYTES = 1 << 12
# charset-normalizer's default (0.2) turned away a GB18030 table of mathematics in Chinese (`∂ ∇ ⋯
# ⟨ ⟩ –`, four bytes each outside GBK): its "chaos" was 0.32 though every byte decoded. The
# checks of one encoding at a time below run with this threshold; _mostly_gb2312 and the
# coherence comparison keep Latin text out of GBK.
ONE_ENCODING_THRESHOLD = 0.6


def encoding_name(encoding: str) -> str:
    """How a person knows the encoding: "Windows-1252", not "cp1252"."""
    if encoding in ENCODING_NAMES:
        return ENCODING_NAMES[encoding]
    if re.fullmatch(r"cp125\d", encoding):
        return f"Windows-{encoding[2:]}"
    return encoding.replace("_", "-").upper().replace("ISO8859-", "ISO-8859-")


def detect_encoding(path: Path, name: str, error: type[UserFacingError], advice: str) -> str:
    """The Python codec that reads all of `path`; else `error` with one sentence ending in
    `advice`, a glm1m/catalog id (what to do: the CSV and the text reader say it differently)."""
    with path.open("rb") as f:
        head = f.read(SAMPLE_BYTES)
    for bom, encoding in BOMS:
        if head.startswith(bom) and (encoding != "utf-32" or _utf32_fits(head, path)):
            skip = 3 if encoding == "utf-8-sig" else 0
            _check_whole(path, "utf-8" if skip else encoding, name, error, advice, skip)
            return encoding
    wide = _wide_unicode(head, path.stat().st_size)
    if wide is not None:
        _check_whole(path, wide, name, error, advice)
        return wide
    bad = _first_bad_byte(path, "utf-8")
    if bad is None:
        return "utf-8"
    offset, at_end = bad
    if at_end and not _ascii_up_to(path, offset):  # UTF-8 throughout, but a download cut short
        raise error(key="encoding_cut_short", name=name, encoding="UTF-8", byte=offset)
    if _utf8_before(path, offset):  # UTF-8 characters first, then a byte that is not one
        raise error(key="encoding_bad_byte_line", name=name, encoding="UTF-8", byte=offset,
                    line=_line(path, offset), advice=said(advice))
    found = guess(sample(path))
    if found is None:
        raise error(key="encoding_unknown", name=name, byte=offset, advice=said(advice))
    _check_whole(path, found, name, error, advice)
    return found


def _utf32_fits(head: bytes, path: Path) -> bool:
    """FF FE 00 00 opens UTF-32LE, or UTF-16LE whose first character is U+0000."""
    try:
        codecs.getincrementaldecoder("utf-32")().decode(head[:1024])
    except UnicodeDecodeError:
        return False
    return path.stat().st_size % 4 == 0


def _wide_unicode(head: bytes, size: int) -> str | None:
    """UTF-16 or UTF-32 without a BOM, told by its zero bytes: ASCII characters (every comma,
    digit and newline of a table) are one non-zero byte beside one or three zero ones, always
    on the same side. A binary file's zeros fall anywhere, and what it decodes to is not text."""
    zeros = head.count(0)
    for encoding, unit in (("utf-32-le", 4), ("utf-32-be", 4), ("utf-16-le", 2), ("utf-16-be", 2)):
        if size % unit or not zeros or zeros * 10 * unit < len(head):  # a zero in 1 unit in 10
            continue
        text_bytes = head[:len(head) // unit * unit]
        try:
            text = text_bytes.decode(encoding)
        except UnicodeDecodeError:
            if len(head) == size:
                continue
            try:  # the sample may end inside a surrogate pair
                text = codecs.getincrementaldecoder(encoding)().decode(text_bytes)
            except UnicodeDecodeError:
                continue
        if text and not CONTROL.search(text) and (LINE_END.search(text) or _ascii_share(text) > 0.5):
            return encoding
    return None


CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
LINE_END = re.compile(r"[\r\n]")


def _ascii_share(text: str) -> float:
    return sum(1 for c in text if c.isascii()) / len(text)


def guess(sample: bytes) -> str | None:
    """charset-normalizer's verdict, with GBK and Windows-1252 (what Chinese and Western Excel
    write) scored on their own: it skips single-byte code pages once a CJK one fits ("São" fits
    Big5), and ranks Baltic or Central European pages over Windows-1252 by tiny margins."""
    from charset_normalizer import from_bytes  # imported here: `glm1m --help` stays fast

    # A table's commas, quotes, newlines and digits must read as themselves (UTF-16 and UTF-32
    # were told above; no UTF-7).
    general = [m for m in from_bytes(sample) if _ascii_compatible(m.encoding)]
    best = general[0] if general else None
    gbk, western = (from_bytes(sample, cp_isolation=[e], threshold=ONE_ENCODING_THRESHOLD).best()
                    for e in ("gb18030", "cp1252"))
    # On 1,000 generated files of 1-50 rows this named all 486 GBK ones and 503 of 514 Western
    # ones right (the rest another Latin code page); charset-normalizer's best() named 399 and 48.
    # EUC-JP and EUC-KR text is GB2312-shaped too (both bytes 0xA1-0xFE), and charset-normalizer
    # gives CJK text no coherence: the chaos tells most apart (Korean read as Chinese: 0.14 to
    # 0.16, as EUC-KR: 0.00 to 0.03, on chardet's test files); GB2312 holds the kana at EUC-JP's
    # codes, so Japanese read as Chinese keeps its kana, which Chinese text hardly has.
    if gbk is not None and _mostly_gb2312(text := str(gbk)) and KANA.subn("", text)[1] < 0.1 * len(
            NOT_ASCII.findall(text)) and (best is None or (
                best.coherence <= gbk.coherence + 0.1  # no language read better
                and gbk.chaos <= best.chaos + 0.02)):  # nor with fewer odd characters
        return "gb18030"
    if western is not None and western.chaos <= 0.2 and _mostly_lone(sample) and (
            best is None or (western.chaos <= best.chaos + 0.1
                             and western.coherence >= best.coherence - 0.2)):
        return "cp1252"
    if best is None:
        return None
    larger = LARGER.get(best.encoding, best.encoding)
    try:
        sample.decode(larger)
    except UnicodeDecodeError:
        return best.encoding
    return larger


# What Windows writes under these names (Python's codecs keep to the standards): Shift_JIS files
# from Windows hold NEC and IBM characters (① ～ ≒) only cp932 has; GBK and GB2312 are subsets
# of GB18030; EUC-KR of cp949. The whole file is checked in the result.
LARGER = {"gbk": "gb18030", "gb2312": "gb18030", "shift_jis": "cp932", "shift_jis_2004": "cp932",
          "shift_jisx0213": "cp932", "euc_kr": "cp949"}


def _mostly_gb2312(text: str) -> bool:
    """Chinese as Chinese Excel writes it is nearly all GB2312 characters (both bytes 0xA1-0xFE);
    Latin text misread as GBK pairs each accented letter's byte with the ASCII letter after it,
    Big5 and Shift_JIS put many lead or trail bytes below 0xA1."""
    chars = [c.encode("gb18030") for c in text if not c.isascii()]
    common = sum(1 for b in chars if len(b) == 2 and b[0] >= 0xA1 and b[1] >= 0xA1)
    return bool(chars) and common >= 0.8 * len(chars)


NON_ASCII = re.compile(rb"[\x80-\xff]")
NOT_ASCII = re.compile(r"[^\x00-\x7f]")
KANA = re.compile(r"[\u3041-\u30ff]")
LONE_NON_ASCII = re.compile(rb"(?<![\x80-\xff])[\x80-\xff](?![\x80-\xff])")


def _mostly_lone(sample: bytes) -> bool:
    """Whether most non-ASCII bytes stand alone between ASCII ones, as accented letters do in
    Western text ("Müller", "café"); CJK characters and Cyrillic or Greek words come in runs."""
    return 2 * len(LONE_NON_ASCII.findall(sample)) >= len(NON_ASCII.findall(sample))


def _ascii_compatible(encoding: str) -> bool:
    probe = ",;\t\"'\r\n 0123456789 azAZ<>"
    try:
        return probe.encode(encoding) == probe.encode("ascii")
    except (UnicodeError, LookupError):
        return False


def sample(path: Path) -> bytes:
    """The detector's evidence: the lines with non-ASCII bytes, up to SAMPLE_BYTES, among ASCII
    lines up to ASCII_CONTEXT_BYTES (a short file is passed whole). Lines are whole characters
    (every encoding left to guess keeps a newline byte a newline); a piece of a line (the last
    one, maybe cut short, or one longer than SAMPLE_BYTES) is cut to character boundaries, and
    kept whole only when it is the only evidence."""
    kept: list[bytes] = []
    non_ascii = ascii_ = 0
    tail, at_line_start = b"", True
    with path.open("rb") as f:
        while non_ascii < SAMPLE_BYTES and (piece := f.readline(SAMPLE_BYTES)):
            starts, at_line_start = at_line_start, piece.endswith(b"\n")
            if not (starts and at_line_start):
                tail = tail or piece
                piece = _whole_characters(piece, starts)
            if not piece.isascii():
                kept.append(piece)
                non_ascii += len(piece)
            elif ascii_ < ASCII_CONTEXT_BYTES:
                kept.append(piece)
                ascii_ += len(piece)
    return b"".join(kept) if non_ascii else b"".join(kept) + tail


ASCII_BYTE = re.compile(rb"[\x00-\x7f]")
UP_TO_AN_ASCII_BYTE = re.compile(rb".*[\x00-\x7f]", re.DOTALL)


def _whole_characters(piece: bytes, starts_a_line: bool) -> bytes:
    """`piece` cut to character boundaries. A character starts after every byte below 0x80 (no
    GBK, Big5 or Shift_JIS character goes on past one; only rare GB18030 four-byte ones do); a
    line of double-byte characters only is cut to an even length."""
    if not starts_a_line:
        first = ASCII_BYTE.search(piece)
        if first is None:
            return b""
        piece = piece[first.end():]
    last = UP_TO_AN_ASCII_BYTE.match(piece)
    return last.group() if last else piece[:len(piece) // 2 * 2]


def _ascii_up_to(path: Path, end: int) -> bool:
    with path.open("rb") as f:
        while end > 0 and (block := f.read(min(end, 1 << 20))):
            if not block.isascii():
                return False
            end -= len(block)
    return True


def _utf8_before(path: Path, end: int) -> bool:
    """Whether the bytes before `end` (which all decode as UTF-8) hold at least three UTF-8
    characters of two bytes or more: too many for text in another encoding to make by chance."""
    found = 0
    with path.open("rb") as f:
        while end > 0 and (block := f.read(min(end, 1 << 20))):
            found += len(UTF8_LEAD.findall(block))
            if found >= 3:
                return True
            end -= len(block)
    return False


UTF8_LEAD = re.compile(rb"[\xc2-\xf4]")


def _line(path: Path, offset: int) -> int:
    """The line of the byte at `offset`, counting newline bytes before it."""
    lines, left = 1, offset
    with path.open("rb") as f:
        while left > 0 and (block := f.read(min(left, 1 << 20))):
            lines += block.count(b"\n")
            left -= len(block)
    return lines


def _first_bad_byte(path: Path, encoding: str, skip: int = 0) -> tuple[int, bool] | None:
    """Where decoding the whole file first fails, and whether it is a last character cut short."""
    decoder = codecs.getincrementaldecoder(encoding)()
    offset, start, at_end = skip, skip, False
    with path.open("rb") as f:
        f.seek(skip)
        try:
            while block := f.read(1 << 20):
                start = offset - len(decoder.getstate()[0])  # bytes held from the last block
                decoder.decode(block)
                offset += len(block)
            start, at_end = offset - len(decoder.getstate()[0]), True
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as failure:
            return start + failure.start, at_end
    return None


def _check_whole(path: Path, encoding: str, name: str, error: type[UserFacingError], advice: str,
                 skip: int = 0) -> None:
    bad = _first_bad_byte(path, encoding, skip)
    if bad is None:
        return
    shown = encoding_name(encoding)
    if bad[1]:
        raise error(key="encoding_cut_short", name=name, encoding=shown, byte=bad[0])
    if _ascii_compatible(encoding):
        raise error(key="encoding_bad_byte_line", name=name, encoding=shown, byte=bad[0],
                    line=_line(path, bad[0]), advice=said(advice))
    raise error(key="encoding_bad_byte", name=name, encoding=shown, byte=bad[0], advice=said(advice))


# HTML: MuPDF 1.28 reads an HTML file as UTF-8 (or by its BOM) whatever its <meta charset> says:
# GB2312, Big5, Shift_JIS and Windows-1252 pages, declared or not, came out as U+FFFD, and
# UTF-16LE without a BOM as "<" alone. So glm1m decodes the page and hands MuPDF UTF-8 with a BOM
# (which MuPDF puts before a <meta charset> naming another encoding).
DECLARED = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)"""
                      rb"""|<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
DECLARED_TEXT = re.compile(DECLARED.pattern.decode("ascii"), re.IGNORECASE)
# The WHATWG Encoding Standard's labels that mean a larger encoding than Python's codec of the
# same name (a page labelled ISO-8859-1 is decoded as Windows-1252 by every browser).
WHATWG = {"iso-8859-1": "cp1252", "iso8859-1": "cp1252", "latin1": "cp1252", "l1": "cp1252",
          "ascii": "cp1252", "us-ascii": "cp1252", "iso_8859-1": "cp1252",
          "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030",
          "big5": "big5hkscs", "shift_jis": "cp932", "sjis": "cp932", "x-sjis": "cp932",
          "ms_kanji": "cp932", "euc-kr": "cp949", "ks_c_5601-1987": "cp949"}
HTML_ADVICE = "advice_html_utf8"


def html_as_utf8(path: Path, name: str, error: type[UserFacingError]) -> bytes:
    """The page's bytes as UTF-8 with a BOM: decoded by its BOM, else by the charset it declares
    in its first 4 KB when the whole page decodes in it, else as detect_encoding finds. Valid
    UTF-8 is taken as UTF-8 whatever the page declares (pages saved as UTF-8 under an old
    ISO-8859-1 header are common; other text is valid UTF-8 only by rare chance)."""
    data = path.read_bytes()
    encoding = None
    if not any(data.startswith(bom) for bom, _ in BOMS) and not _is_utf8(data):
        declared = DECLARED.search(data[:4096])
        label = (declared.group(1) or declared.group(2)).decode("ascii").lower() if declared else ""
        try:
            encoding = codecs.lookup(WHATWG.get(label, label)).name if label else None
            if encoding is not None and _ascii_compatible(encoding):
                data.decode(encoding)
            else:
                encoding = None
        except (LookupError, UnicodeDecodeError):  # unknown, or not what the page is in
            encoding = None
    if encoding is None:
        encoding = detect_encoding(path, name, error, HTML_ADVICE)
    return codecs.BOM_UTF8 + declared_utf8(data.decode(encoding).removeprefix("\ufeff")).encode("utf-8")


def declared_utf8(page: str) -> str:
    """The page saying UTF-8 where it declares another charset (in its first 4 KB): MuPDF 1.28.5
    puts an http-equiv Content-Type's charset before the BOM, so libjson-c5's README.html
    (charset=iso-8859-1) came out with "ï»¿" before its heading and "é" as "Ã©"."""
    def utf8(declared: re.Match[str]) -> str:
        label, at = declared.lastindex or 1, declared.start()
        whole = declared.group(0)
        return whole[:declared.start(label) - at] + "utf-8" + whole[declared.end(label) - at:]
    return DECLARED_TEXT.sub(utf8, page[:4096]) + page[4096:]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
