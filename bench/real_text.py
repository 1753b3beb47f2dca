"""Plain-text documents of about N tokens built from real text on this machine, for benchmarks that
need a long document which is not generated: Debian's changelogs and READMEs (English, with
names, versions, dates and code), the Chinese and Japanese man pages, and the text of the Debian
manuals' PDFs. Each document takes its own files (document k starts where document k-1 stopped), so
two documents share no text and no prefix-cache blocks.

    .venv-server/bin/python -m bench.real_text --tokenizer .gpu/full-size-model \
        --tokens 1000000 --out .gpu/docs/A.txt .gpu/docs/B.txt

Token counts come from the served model's own tokenizer.json (what vLLM's /tokenize uses);
the app's count adds its page markers and prompt, a few percent.
"""

from __future__ import annotations

import argparse
import gzip
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

DOCS = Path("/usr/share/doc")
APP_PYTHON = Path(__file__).resolve().parents[1] / ".venv" / "bin" / "python"
MAN = Path("/usr/share/man")
# Control characters other than tab and newline say a file is binary or roff noise.
BINARY = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


def read_gz(path: Path) -> str:
    try:
        return gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return ""


def man_text(path: Path) -> str:
    """A man page as a reader sees it where `man` is installed, else its source with the roff
    requests dropped (lines starting with '.' or a quote)."""
    source = read_gz(path)
    lines = [line for line in source.splitlines() if not line.startswith((".", "'", '\\"'))]
    return re.sub(r"\\f[BIRP]|\\-|\\\(..|\\&", "", "\n".join(lines))


def pdf_text(path: Path) -> str:
    """The text glm1m itself reads from the PDF (`glm1m extract`, the app's venv)."""
    try:
        found = subprocess.run([str(APP_PYTHON), "-m", "glm1m.cli", "extract", str(path)],
                               capture_output=True, timeout=300, check=True)
        return found.stdout.decode("utf-8", errors="replace")
    except (OSError, subprocess.SubprocessError):
        return ""


def sources() -> Iterator[tuple[str, str]]:
    """(name, text) of every readable file, in a fixed order, mixed scripts interleaved so each
    document gets some of each."""
    chinese = sorted(p for lang in ("zh_CN", "zh_TW", "ja") for p in (MAN / lang).rglob("*.gz"))
    english = sorted(p for p in DOCS.rglob("*.gz") if not p.name.endswith(".ps.gz"))  # changelogs,
    # READMEs, NEWS (PostScript is program text, not prose)
    pdfs = sorted(DOCS.rglob("*.pdf"))
    cjk = iter(chinese)
    for n, path in enumerate(english):
        yield str(path), read_gz(path)
        if n % 3 == 0:
            if (page := next(cjk, None)) is not None:
                yield str(page), man_text(page)
            if pdfs:
                pdf = pdfs.pop(0)
                yield str(pdf), pdf_text(pdf)


def build(tokenizer_dir: Path, tokens: int, outs: list[Path]) -> list[int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    files = sources()
    counts = []
    for out in outs:
        parts, total = [], 0
        for name, text in files:
            text = text.strip()
            if len(text) < 200 or BINARY.search(text):
                continue
            piece = f"# {name}\n\n{text}\n\n"
            size = len(tokenizer.encode(piece, add_special_tokens=False).ids)
            if total + size > tokens:
                if total > 0.95 * tokens:
                    break
                continue  # too large for what is left: a smaller file further on fits
            parts.append(piece)
            total += size
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(parts), encoding="utf-8")
        counts.append(total)
        print(f"{out}: {total:,} tokens, {len(parts)} files, {out.stat().st_size / 1e6:.1f} MB")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", type=Path, required=True, help="folder with tokenizer.json")
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--out", type=Path, nargs="+", required=True)
    args = parser.parse_args()
    build(args.tokenizer, args.tokens, args.out)


if __name__ == "__main__":
    main()
