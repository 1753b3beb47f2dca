"""Files on disk: written whole or not at all, and names made safe from what a browser sent.

Atomic writes go beside the target (mkstemp: mode 0600), then move into place, so a reader or a
crash never sees half a file.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath, PureWindowsPath


def _temp_with(path: Path, body: bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_whole(path: Path, body: bytes) -> None:
    """Replace `path` with `body`."""
    tmp = _temp_with(path, body)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_once(path: Path, body: bytes) -> None:
    """Create `path` with `body` unless it exists. link() fails when another process got there
    first; then the file keeps that process's content."""
    tmp = _temp_with(path, body)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)


@contextmanager
def replace_when_done(path: Path) -> Iterator[Path]:
    """A new file beside `path` to write into in steps; it replaces `path` only when the block
    ends without an error, so an interruption (Ctrl-C, a crash, a full disk) leaves the previous
    `path` whole and no half file. Unlike write_whole's files it gets the usual mode (umask)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


# Controls (C0, DEL, C1), line and paragraph separators, and the bidi marks, embeddings, overrides
# and isolates: with U+202E "inv\u202efdp.csv" shows as "invvsc.pdf"; the others break lines.
UNSAFE_IN_NAMES = re.compile(r'[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069/\\:*?"<>|]')
MAX_STEM_BYTES = 150  # the folder's own path and ".translated.csv" must fit too (255 a name)


def output_stem(uploaded_name: str, fallback: str = "upload") -> str:
    """A file-name stem made from what the browser sent as a name, which may hold anything: the
    last path part (either slash), no control, line-separator or bidi characters, none of
    `/\\:*?"<>|`, cut whole-character at 150 UTF-8 bytes."""
    last = PureWindowsPath(PurePosixPath(uploaded_name).name).name
    stem = UNSAFE_IN_NAMES.sub("_", PurePosixPath(last).stem).strip(" .")
    # Cut the bytes, then drop a character the cut split in two.
    stem = stem.encode("utf-8")[:MAX_STEM_BYTES].decode("utf-8", "ignore")
    return stem or fallback


UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def folder_name(ident: str) -> str:
    """A folder name for a thread or session id. Those come from the browser (Chainlit takes them
    from the socket's auth payload unchecked), so anything but a UUID is replaced by its hash."""
    return ident if UUID.fullmatch(ident) else hashlib.sha256(ident.encode()).hexdigest()[:32]
