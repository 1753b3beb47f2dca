"""The shelf: each user's documents, read once. A document attached anywhere (the page, the CLI) is
kept by its content's SHA-256 with its locations (pages.text_body's form), the name it came with,
when it was added, and its token count per served model, so the same bytes attached again (another
chat, another name) start at once: no reading, no OCR, no /tokenize.

On disk, per user: the metadata in a SQLite database (shelf_db.py: documents, their ways of
reading, and the notes on each read: counts, and when it was last sent whole to which server,
answered: server_key), and the big things as files in the user's folder, one folder per document:
`<sha256>/<read digest>.json` (the text) and `<sha256>/<read digest>.<name>.ids` (token ids of
its whole-document prompt: documents/prompt_ids.py names and writes them). A set of documents
asked together keeps its count and reads under one of them (`of_set`), and its prompt's ids
beside that read's. A way of reading is the format and, for paged formats, the OCR mode,
languages and resolution: they change the text, so another choice reads again. A count is kept
per served model name and served context: the Llm interface names no tokenizer, and a server
serving the same name with another context is another deployment (the demo model and the real one
share the name), so a wrong count is never reused; asking /v1/models for the context costs
milliseconds, counting a 1M-token document seconds.

Each noting is one transaction: two chats noting facts about one document at once both keep
theirs. A text file damaged or missing is a miss: the document is read again and kept anew. The
methods block (SQLite, files): async code calls them through `shelf.aio` (AsyncShelf), which hops
to a worker thread in this one place.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

from glm1m.catalog import said
from glm1m.documents.pages import DocumentText, text_body, text_of
from glm1m.documents.shelf_db import connected, db_path
from glm1m.errors import DocumentError
from glm1m.files import write_whole
from glm1m.sizes import MB, size_words

OPEN_SHELF = "_open"  # the one shelf while login is off (a user's folder is a hex hash)


class ShelfFull(DocumentError):
    """The user's shelf is at its cap: the document was read but not kept."""


class NotOnShelf(DocumentError):
    """`shelf rm` named nothing (or too much) on the shelf: shelf_not_found, shelf_ambiguous."""


@dataclass(frozen=True)
class ShelfKey:
    """What a read of a file is kept under: its bytes' hash and the way it was read."""
    sha256: str
    read: str  # "pdf ocr=auto lang=chi_sim+eng dpi=150"; "docx"
    size: int  # the file's bytes

    @property
    def read_digest(self) -> str:
        return hashlib.sha256(self.read.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Shelved:
    """A document as the shelf gives it back: its text under the name it was attached with now."""
    key: ShelfKey
    text: DocumentText
    added: float  # when it was first kept (seconds since the epoch)
    hit: bool  # True: from the shelf, not read now


@dataclass(frozen=True)
class Entry:
    """One document on the shelf, as `shelf list` shows it."""
    sha256: str
    name: str
    added: float
    bytes: int  # what it takes on the shelf
    locations: int  # pages or sections of its latest read
    unit: str
    tokens: dict[str, int]  # by count key ("glm-4-9b-chat-1m@1048576")


def count_key(model: str, max_model_len: int) -> str:
    return f"{model}@{max_model_len}"


def server_key(model: str, max_model_len: int, base_url: str) -> str:
    """Which server read a document: the deployment (count_key) at its address. Its prefix cache
    and KV tier live in that server's memory, so another address never holds what this one read."""
    return f"{count_key(model, max_model_len)} {base_url.rstrip('/')}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


class Shelf:
    def __init__(self, root: Path, max_bytes: int, user: str | None = None) -> None:
        """`root`: this user's folder (Shelf.of makes it); `user` for the sentences only."""
        self.root = root
        self.max_bytes = max_bytes
        self.user = user

    @classmethod
    def of(cls, data_dir: Path, max_mb: float, user: str | None = None) -> Shelf:
        """`user`'s shelf (a login name), or the one shelf when login is off (None). The folder
        is the name's hash, as folder_name makes for ids: a name never becomes a path."""
        folder = OPEN_SHELF if user is None else hashlib.sha256(user.encode()).hexdigest()[:32]
        return cls(data_dir / "shelf" / folder, int(max_mb * MB), user)

    @property
    def aio(self) -> AsyncShelf:
        """This shelf for async code: the same methods, awaited."""
        return AsyncShelf(self)

    # --- reading through the shelf ---
    def find(self, key: ShelfKey, name: str) -> Shelved | None:
        """The kept text of this read of these bytes, renamed `name`; None when there is none or it
        is damaged (then it is read and kept again)."""
        if not self._exists():
            return None
        with connected(self.root) as db:
            row = db.execute("SELECT d.added, r.file FROM documents d JOIN reads r USING (sha256) "
                             "WHERE sha256 = ? AND r.read = ?", (key.sha256, key.read)).fetchone()
        if row is None:
            return None
        try:
            body = json.loads((self.root / key.sha256 / row[1]).read_text(encoding="utf-8"))
            return Shelved(key, replace(text_of(body), name=name), float(row[0]), hit=True)
        except (OSError, KeyError, TypeError, ValueError):
            return None

    def latest(self, sha256: str) -> Shelved | None:
        """The document kept under `sha256` as last read, under the name it was first attached
        with (the page adds a shelf document to a chat by it); None when there is none."""
        if not self._exists():
            return None
        with connected(self.root) as db:
            row = db.execute("SELECT name, latest, size FROM documents WHERE sha256 = ?",
                             (sha256,)).fetchone()
        if row is None or row[1] is None:
            return None
        return self.find(ShelfKey(sha256, row[1], row[2]), row[0])

    def keep(self, key: ShelfKey, name: str, text: DocumentText) -> Shelved:
        """Keep a text just read (its earlier notes, if it was kept before, start anew). Raises
        ShelfFull (nothing written) past the cap."""
        body = json.dumps(text_body(text), ensure_ascii=False).encode("utf-8")
        file = f"{key.read_digest}.json"
        used = self.used_bytes() - _bytes_of(self.root / key.sha256 / file)
        if used + len(body) > self.max_bytes:
            raise self._full(name, len(body), used)
        write_whole(self.root / key.sha256 / file, body)
        with connected(self.root, write=True) as db:
            db.execute("INSERT INTO documents VALUES (?, ?, ?, ?, ?) ON CONFLICT (sha256) "
                       "DO UPDATE SET latest = excluded.latest",
                       (key.sha256, name, time.time(), key.size, key.read))
            for table in ("counts", "sent"):
                db.execute(f"DELETE FROM {table} WHERE sha256 = ? AND read = ?", (key.sha256, key.read))
            db.execute("INSERT OR REPLACE INTO reads VALUES (?, ?, ?, ?, ?)",
                       (key.sha256, key.read, file, len(text.pages), text.kind.unit))
            added = db.execute("SELECT added FROM documents WHERE sha256 = ?", (key.sha256,)).fetchone()
        return Shelved(key, text, float(added[0]), hit=False)

    def count(self, key: ShelfKey, counted_as: str, of_set: str | None = None) -> tuple[int, int] | None:
        """(tokens, chars) of this read as counted for `counted_as` (count_key), if kept.
        `of_set`: of the set of documents so named (through_shelf.set_name) kept under this read."""
        if not self._exists():
            return None
        with connected(self.root) as db:
            row = db.execute("SELECT tokens, chars FROM counts WHERE sha256 = ? AND read = ? AND "
                             "of_set = ? AND counted_as = ?",
                             (key.sha256, key.read, of_set or "", counted_as)).fetchone()
        return (int(row[0]), int(row[1])) if row is not None else None

    def sent_at(self, key: ShelfKey, server: str, of_set: str | None = None) -> float | None:
        """When this read (or its set `of_set`) was last sent whole to `server` (server_key) and
        answered, if ever."""
        if not self._exists():
            return None
        with connected(self.root) as db:
            row = db.execute("SELECT at FROM sent WHERE sha256 = ? AND read = ? AND of_set = ? AND "
                             "server = ?", (key.sha256, key.read, of_set or "", server)).fetchone()
        return float(row[0]) if row is not None else None

    def keep_sent(self, key: ShelfKey, server: str, when: float, of_set: str | None = None) -> None:
        self._note("sent", "at = excluded.at", key, of_set, server, when)

    def keep_count(self, key: ShelfKey, counted_as: str, tokens: int, chars: int,
                   of_set: str | None = None) -> None:
        self._note("counts", "tokens = excluded.tokens, chars = excluded.chars", key, of_set,
                   counted_as, tokens, chars)

    def _note(self, table: str, update: str, key: ShelfKey, of_set: str | None, *values: object) -> None:
        """One note on this read (or its set `of_set`), one statement: nothing else's note is
        lost. None when the read is not kept (removed meanwhile, or the shelf was full)."""
        row = (key.sha256, key.read, of_set or "", *values)
        marks = ", ".join("?" * len(row))
        with connected(self.root, write=True) as db:
            db.execute(f"INSERT INTO {table} SELECT {marks} WHERE EXISTS (SELECT 1 FROM reads "
                       f"WHERE sha256 = ? AND read = ?) ON CONFLICT DO UPDATE SET {update}",
                       (*row, key.sha256, key.read))

    def ids(self, key: ShelfKey, name: str) -> bytes | None:
        """The token ids kept for this read under `name` (a hex digest), if any."""
        try:
            return self._ids_path(key, name).read_bytes()
        except OSError:
            return None

    def keep_ids(self, key: ShelfKey, name: str, data: bytes) -> None:
        """Keep token ids beside this read's text, counted in the shelf's bytes. Not kept when the
        document is not (removed meanwhile, or the shelf was full) or they would pass the cap:
        they are made again then, for a /tokenize's seconds."""
        path = self._ids_path(key, name)
        if self.used_bytes() - _bytes_of(path) + len(data) > self.max_bytes or not self._exists():
            return
        with connected(self.root) as db:
            kept = db.execute("SELECT 1 FROM documents WHERE sha256 = ?", (key.sha256,)).fetchone()
        if kept is not None:
            write_whole(path, data)

    def _ids_path(self, key: ShelfKey, name: str) -> Path:
        if not name.isalnum():  # a name never becomes a path of its own
            raise ValueError(name)
        return self.root / key.sha256 / f"{key.read_digest}.{name}.ids"

    # --- managing it ---
    def entries(self) -> list[Entry]:
        """Every document on the shelf, latest added first; a folder the database does not know
        (its metadata lost) as "(damaged)", so `shelf rm` can still delete it."""
        folders = [f for f in self.root.iterdir() if f.is_dir()] if self.root.is_dir() else []
        if not folders:
            return []
        with connected(self.root) as db:
            rows = {r[0]: r[1:] for r in db.execute(
                "SELECT d.sha256, d.name, d.added, r.locations, r.unit FROM documents d "
                "LEFT JOIN reads r ON r.sha256 = d.sha256 AND r.read = d.latest")}
            counts: dict[str, dict[str, int]] = {}
            for sha256, counted_as, tokens in db.execute(
                    "SELECT c.sha256, c.counted_as, c.tokens FROM counts c JOIN documents d ON "
                    "c.sha256 = d.sha256 AND c.read = d.latest WHERE c.of_set = ''"):
                counts.setdefault(sha256, {})[counted_as] = tokens
        found = []
        for folder in folders:
            name, added, locations, unit = rows.get(folder.name, ("(damaged)", 0.0, 0, "pages"))
            found.append(Entry(folder.name, name, added, _tree_bytes(folder), locations or 0,
                               unit or "pages", counts.get(folder.name, {})))
        return sorted(found, key=lambda e: -e.added)

    def matching(self, name_or_prefix: str) -> list[Entry]:
        """Entries named exactly so, else whose hash begins with it (4 hex digits at least)."""
        entries = self.entries()
        named = [e for e in entries if e.name == name_or_prefix]
        if named or len(name_or_prefix) < 4:
            return named
        return [e for e in entries if e.sha256.startswith(name_or_prefix.lower())]

    def one(self, name_or_prefix: str) -> Entry:
        """The one entry `name_or_prefix` names (as matching finds it). Raises NotOnShelf when
        nothing, or more than one, matches."""
        found = self.matching(name_or_prefix)
        if not found:
            raise NotOnShelf(key="shelf_not_found", name=name_or_prefix)
        if len(found) > 1:
            raise NotOnShelf(key="shelf_ambiguous", count=len(found), name=name_or_prefix,
                             matches=", ".join(f"{e.name} ({e.sha256[:12]})" for e in found))
        return found[0]

    def remove(self, name_or_prefix: str) -> Entry:
        """Delete one document: its row, then its files. Raises NotOnShelf as `one` does."""
        entry = self.one(name_or_prefix)
        with connected(self.root, write=True) as db:
            db.execute("DELETE FROM documents WHERE sha256 = ?", (entry.sha256,))
        shutil.rmtree(self.root / entry.sha256, ignore_errors=True)
        return entry

    def used_bytes(self) -> int:
        """The documents' files (the database beside them is small, and not counted)."""
        return _tree_bytes(self.root)

    def _exists(self) -> bool:
        """Whether there is anything to read (a user with no shelf gets no database made)."""
        return self.root.is_dir() or db_path(self.root).exists()

    def _full(self, name: str, needed: int, used: int) -> ShelfFull:
        largest = sorted(self.entries(), key=lambda e: -e.bytes)[:3]
        names = [f"{e.name} ({size_words(e.bytes)})" for e in largest] or said("shelf_nothing_yet")
        who = f" --user {self.user}" if self.user else ""
        return ShelfFull(key="shelf_full", used=size_words(used), cap=size_words(self.max_bytes), name=name,
                         needed=size_words(needed), command=f"glm1m shelf rm NAME{who}", largest=names)


class AsyncShelf:
    """A Shelf for async code: each call runs the Shelf's own on a worker thread (SQLite and the
    files block; a text file is megabytes), so no caller writes the hop itself."""

    def __init__(self, shelf: Shelf) -> None:
        self.shelf = shelf

    async def find(self, key: ShelfKey, name: str) -> Shelved | None:
        return await asyncio.to_thread(self.shelf.find, key, name)

    async def latest(self, sha256: str) -> Shelved | None:
        return await asyncio.to_thread(self.shelf.latest, sha256)

    async def keep(self, key: ShelfKey, name: str, text: DocumentText) -> Shelved:
        return await asyncio.to_thread(self.shelf.keep, key, name, text)

    async def count(self, key: ShelfKey, counted_as: str, of_set: str | None = None
                    ) -> tuple[int, int] | None:
        return await asyncio.to_thread(self.shelf.count, key, counted_as, of_set)

    async def keep_count(self, key: ShelfKey, counted_as: str, tokens: int, chars: int,
                         of_set: str | None = None) -> None:
        await asyncio.to_thread(self.shelf.keep_count, key, counted_as, tokens, chars, of_set)

    async def sent_at(self, key: ShelfKey, server: str, of_set: str | None = None) -> float | None:
        return await asyncio.to_thread(self.shelf.sent_at, key, server, of_set)

    async def keep_sent(self, key: ShelfKey, server: str, when: float, of_set: str | None = None) -> None:
        await asyncio.to_thread(self.shelf.keep_sent, key, server, when, of_set)

    async def ids(self, key: ShelfKey, name: str) -> bytes | None:
        return await asyncio.to_thread(self.shelf.ids, key, name)

    async def keep_ids(self, key: ShelfKey, name: str, data: bytes) -> None:
        await asyncio.to_thread(self.shelf.keep_ids, key, name, data)

    async def entries(self) -> list[Entry]:
        return await asyncio.to_thread(self.shelf.entries)

    async def used_bytes(self) -> int:
        return await asyncio.to_thread(self.shelf.used_bytes)

    async def remove(self, name_or_prefix: str) -> Entry:
        return await asyncio.to_thread(self.shelf.remove, name_or_prefix)



def _bytes_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _tree_bytes(folder: Path) -> int:
    return sum(_bytes_of(p) for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0
