"""The shelf's metadata as a small SQLite database, one per user beside that user's folder of
files (`DATA_DIR/shelf/<user folder>.db`): which documents there are, their ways of reading, and
the notes kept about each read (its token counts per served model, when a server last read it
whole), for the read alone or for a set of documents asked together (`of_set`).

Why SQLite and the standard library's sqlite3: several chats, and the CLI beside the page, note
facts about one document at once; each noting is one transaction (an upsert), so none is lost,
where a read-modify-write of a JSON file lost one of two. The calls are few and small, so a
connection per call on a worker thread (shelf.AsyncShelf) keeps the core free of an ORM and an
async driver (the history's SQLAlchemy + aiosqlite serve Chainlit's data layer, not this).

Ordered migrations, as simonw/llm keeps its own: `migrations` holds each version applied, and a
newer glm1m runs the ones missing, in order, each in a transaction taken before anything is read
(BEGIN IMMEDIATE), so two processes opening an old shelf at once apply each once. Version 2 brings
in the shelves written before this database (a meta.json in each document's folder), nothing lost.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from glm1m.errors import DocumentError

BUSY_S = 30.0  # how long a write waits for another process's (a noting takes milliseconds)

SCHEMA = """
CREATE TABLE documents (
    sha256 TEXT PRIMARY KEY,          -- the file's bytes
    name TEXT NOT NULL,               -- as first attached
    added REAL NOT NULL,              -- seconds since the epoch
    size INTEGER NOT NULL,            -- the file's bytes
    latest TEXT                       -- the read last kept (reads.read)
);
CREATE TABLE reads (
    sha256 TEXT NOT NULL REFERENCES documents ON DELETE CASCADE,
    read TEXT NOT NULL,               -- the way of reading: "pdf ocr=auto lang=eng dpi=150"
    file TEXT NOT NULL,               -- its text, in the document's folder
    locations INTEGER NOT NULL,
    unit TEXT NOT NULL,
    PRIMARY KEY (sha256, read)
);
CREATE TABLE counts (
    sha256 TEXT NOT NULL, read TEXT NOT NULL,
    of_set TEXT NOT NULL,             -- '' for the read alone, else through_shelf.set_name
    counted_as TEXT NOT NULL,         -- shelf.count_key
    tokens INTEGER NOT NULL, chars INTEGER NOT NULL,
    PRIMARY KEY (sha256, read, of_set, counted_as),
    FOREIGN KEY (sha256, read) REFERENCES reads ON DELETE CASCADE
);
CREATE TABLE sent (
    sha256 TEXT NOT NULL, read TEXT NOT NULL,
    of_set TEXT NOT NULL,
    server TEXT NOT NULL,             -- shelf.server_key
    at REAL NOT NULL,
    PRIMARY KEY (sha256, read, of_set, server),
    FOREIGN KEY (sha256, read) REFERENCES reads ON DELETE CASCADE
);
"""


class ShelfUnavailable(DocumentError):
    """The shelf's database cannot be used (locked past BUSY_S, the disk full, damaged)."""


def create_tables(db: sqlite3.Connection, folder: Path) -> None:
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


def import_meta_json(db: sqlite3.Connection, folder: Path) -> None:
    """The shelves glm1m wrote before this database: `<sha256>/meta.json` in each document's
    folder, format 1. Everything today's reading could use comes over; what it would have taken
    for damage (unparsable, wrong types) stays a miss, as it was. The files stay where they are."""
    for meta_file in sorted(folder.glob("*/meta.json")) if folder.is_dir() else ():
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            if not isinstance(meta, dict) or meta.get("format") != 1 or "added" not in meta:
                continue
            reads = _dict(meta.get("reads"))
            db.execute("INSERT OR IGNORE INTO documents VALUES (?, ?, ?, ?, ?)",
                       (meta_file.parent.name, str(meta["name"]), float(meta["added"]),
                        int(meta["size"]), meta.get("latest") if meta.get("latest") in reads else None))
        except (OSError, KeyError, TypeError, ValueError):
            continue
        for read, part in reads.items():
            _import_read(db, meta_file.parent.name, str(read), part)


def _import_read(db: sqlite3.Connection, sha256: str, read: str, part: object) -> None:
    try:
        db.execute("INSERT OR IGNORE INTO reads VALUES (?, ?, ?, ?, ?)",
                   (sha256, read, str(part["file"]), int(part["locations"]),  # type: ignore[index]
                    str(part["unit"])))  # type: ignore[index]
    except (KeyError, TypeError, ValueError):
        return
    sets = part.get("sets") if isinstance(part.get("sets"), dict) else {}  # type: ignore[attr-defined]
    for of_set, notes in [("", part), *sets.items()]:
        if not isinstance(notes, dict):
            continue
        for counted_as, found in _dict(notes.get("counts")).items():
            try:
                db.execute("INSERT OR IGNORE INTO counts VALUES (?, ?, ?, ?, ?, ?)",
                           (sha256, read, str(of_set), str(counted_as), int(found["tokens"]),
                            int(found["chars"])))
            except (KeyError, TypeError, ValueError):
                continue
        for server, at in _dict(notes.get("sent")).items():
            try:
                db.execute("INSERT OR IGNORE INTO sent VALUES (?, ?, ?, ?, ?)",
                           (sha256, read, str(of_set), str(server), float(at)))
            except (TypeError, ValueError):
                continue


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


Migration = Callable[[sqlite3.Connection, Path], None]
# In order, never edited once released: a change to the schema is a new version at the end.
MIGRATIONS: tuple[tuple[int, str, Migration], ...] = (
    (1, "create tables", create_tables),
    (2, "import meta.json shelves", import_meta_json),
)


def db_path(folder: Path) -> Path:
    """Beside the user's folder, so the folder holds only documents (and the cap counts them)."""
    return folder.with_name(f"{folder.name}.db")


@contextmanager
def connected(folder: Path, write: bool = False) -> Iterator[sqlite3.Connection]:
    """A connection to `folder`'s database, migrated, inside one transaction (`write`: taken at
    once, BEGIN IMMEDIATE, so a read-then-write inside it is never interleaved with another's).
    Commits when the block ends, rolls back when it raises. Raises ShelfUnavailable."""
    path = db_path(folder)
    try:
        with closing(opened(path, folder)) as db:
            db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
    except sqlite3.Error as error:
        raise ShelfUnavailable(key="shelf_db_failed", path=str(path), detail=str(error)) from error
    except OSError as error:
        raise ShelfUnavailable(key="shelf_db_failed", path=str(path),
                               detail=error.strerror or str(error)) from error


def opened(path: Path, folder: Path) -> sqlite3.Connection:
    """The database at `path`, migrated. One that is no database (damaged) is moved aside to
    `<name>.db.damaged` and made anew: its documents are read again, as a damaged meta.json's
    were, and it stays there to look into."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in (1, 2):
        db = sqlite3.connect(path, timeout=BUSY_S, isolation_level=None)
        try:
            db.execute("PRAGMA foreign_keys = ON")
            # WAL's NORMAL: no fsync a commit; a power cut may lose the last notes, never the
            # database, and a lost note is a count or a read made again.
            db.execute("PRAGMA synchronous = NORMAL")
            migrate(db, folder)
            _anchor(path)
            return db
        except sqlite3.DatabaseError as error:
            db.close()
            if isinstance(error, sqlite3.OperationalError) or attempt == 2:
                raise
            _drop_anchor(path)
            for suffix in ("", "-wal", "-shm"):
                aside = path.with_name(path.name + suffix)
                if aside.exists():
                    aside.replace(path.with_name(f"{path.name}.damaged{suffix}"))
    raise AssertionError("unreachable")


# One idle connection kept open per database: the last connection to close checkpoints the WAL
# into the database (fsyncs), which made each note 20 ms on this project's disks, and a chat's
# first answer piece waits for its note; with another still open a note takes 0.3 ms.
ANCHORS_KEPT = 64
_anchors: dict[Path, sqlite3.Connection] = {}
_anchors_lock = threading.Lock()


def _anchor(path: Path) -> None:
    with _anchors_lock:
        if path in _anchors:
            _anchors[path] = _anchors.pop(path)  # the most recent last
            return
        if len(_anchors) >= ANCHORS_KEPT:
            _anchors.pop(next(iter(_anchors))).close()
        anchor = sqlite3.connect(path, check_same_thread=False)
        anchor.execute("SELECT count(*) FROM migrations").fetchall()  # opened only once it reads
        _anchors[path] = anchor


def _drop_anchor(path: Path) -> None:
    with _anchors_lock:
        anchor = _anchors.pop(path, None)
    if anchor is not None:
        anchor.close()


def migrate(db: sqlite3.Connection, folder: Path) -> None:
    """Apply the migrations this database lacks, each in its own transaction."""
    if _version(db) >= MIGRATIONS[-1][0]:
        return
    db.execute("PRAGMA journal_mode = WAL")  # readers go on while one process writes
    for version, name, step in MIGRATIONS:
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute("CREATE TABLE IF NOT EXISTS migrations "
                       "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied REAL NOT NULL)")
            if _version(db) < version:  # another process may have applied it meanwhile
                step(db, folder)
                db.execute("INSERT INTO migrations VALUES (?, ?, ?)", (version, name, time.time()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def _version(db: sqlite3.Connection) -> int:
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'migrations'").fetchone() is None:
        return 0
    return int(db.execute("SELECT coalesce(max(version), 0) FROM migrations").fetchone()[0])
