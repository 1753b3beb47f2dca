"""The shelf as glm1m wrote it before its SQLite database (HEAD 645ca57's glm1m/documents/shelf.py,
verbatim below this note but for its docstring): a meta.json per document. Tests write shelves
with it to check that the database brings them in with nothing lost, and run the
concurrent-noting test against it to show that it loses notes."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import dataclass, replace
from pathlib import Path

from glm1m.catalog import said
from glm1m.documents.pages import DocumentText
from glm1m.documents.store import text_body, text_of
from glm1m.errors import DocumentError
from glm1m.files import write_whole

FORMAT = 1
OPEN_SHELF = "_open"  # the one shelf while login is off (a user's folder is a hex hash)
MB = 1_000_000


class ShelfFull(DocumentError):
    """The user's shelf is at its cap: the document was read but not kept."""


class NotOnShelf(DocumentError):
    """`shelf rm` named nothing (or too much) on the shelf."""


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

    # --- reading through the shelf ---
    def find(self, key: ShelfKey, name: str) -> Shelved | None:
        """The kept text of this read of these bytes, renamed `name`; None when there is none or it
        is damaged (then it is read and kept again)."""
        meta = self._meta(key.sha256)
        read = meta.get("reads", {}).get(key.read) if meta else None
        if not isinstance(read, dict) or meta is None:
            return None
        try:
            body = json.loads((self.root / key.sha256 / read["file"]).read_text(encoding="utf-8"))
            text = text_of(body)
            return Shelved(key, replace(text, name=name), float(meta["added"]), hit=True)
        except (OSError, KeyError, TypeError, ValueError):
            return None

    def latest(self, sha256: str) -> Shelved | None:
        """The document kept under `sha256` as last read, under the name it was first attached
        with (the page adds a shelf document to a chat by it); None when there is none."""
        meta = self._meta(sha256)
        try:
            key = ShelfKey(sha256, str(meta["latest"]), int(meta["size"])) if meta else None
        except (KeyError, TypeError, ValueError):
            return None
        return self.find(key, str(meta["name"])) if key is not None and meta else None

    def keep(self, key: ShelfKey, name: str, text: DocumentText) -> Shelved:
        """Keep a text just read. Raises ShelfFull (nothing written) past the cap."""
        body = json.dumps(text_body(text), ensure_ascii=False).encode("utf-8")
        folder = self.root / key.sha256
        previous = self._meta(key.sha256)
        meta = previous or {"format": FORMAT, "sha256": key.sha256, "name": name,
                            "added": time.time(), "size": key.size, "reads": {}}
        used = self.used_bytes() - _bytes_of(folder / f"{key.read_digest}.json")
        if used + len(body) > self.max_bytes:
            raise self._full(name, len(body), used)
        write_whole(folder / f"{key.read_digest}.json", body)
        meta.setdefault("reads", {})[key.read] = {"file": f"{key.read_digest}.json",
                                                  "locations": len(text.pages),
                                                  "unit": text.kind.unit, "counts": {}}
        meta["latest"] = key.read
        self._write_meta(key.sha256, meta)
        return Shelved(key, text, float(meta["added"]), hit=False)

    def count(self, key: ShelfKey, counted_as: str, of_set: str | None = None) -> tuple[int, int] | None:
        """(tokens, chars) of this read as counted for `counted_as` (count_key), if kept.
        `of_set`: of the set of documents so named (through_shelf.set_name) kept under this read."""
        try:
            found = _part(self._meta(key.sha256), key, of_set)["counts"][counted_as]
            return (int(found["tokens"]), int(found["chars"])) if found else None
        except (KeyError, TypeError, ValueError):
            return None

    def sent_at(self, key: ShelfKey, server: str, of_set: str | None = None) -> float | None:
        """When this read (or its set `of_set`) was last sent whole to `server` (server_key) and
        answered, if ever."""
        try:
            found = _part(self._meta(key.sha256), key, of_set).get("sent", {}).get(server)
            return float(found) if found is not None else None
        except (AttributeError, KeyError, TypeError, ValueError):
            return None

    def keep_sent(self, key: ShelfKey, server: str, when: float, of_set: str | None = None) -> None:
        self._keep_in(key, of_set, "sent", server, when)

    def _keep_in(self, key: ShelfKey, of_set: str | None, kind: str, name: str, value: object) -> None:
        """Note `value` as `name` in this read's (or its set's) `kind` ("counts", "sent")."""
        meta = self._meta(key.sha256)
        try:
            part = _part(meta, key, of_set, make=True)
        except (AttributeError, KeyError, TypeError):
            return  # removed meanwhile (or never kept: the shelf was full)
        part.setdefault(kind, {})[name] = value
        self._write_meta(key.sha256, meta)  # type: ignore[arg-type]  # _part raised on None

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
        if self._meta(key.sha256) is None or self.used_bytes() - _bytes_of(path) + len(data) > self.max_bytes:
            return
        write_whole(path, data)

    def _ids_path(self, key: ShelfKey, name: str) -> Path:
        if not name.isalnum():  # a name never becomes a path of its own
            raise ValueError(name)
        return self.root / key.sha256 / f"{key.read_digest}.{name}.ids"

    def keep_count(self, key: ShelfKey, counted_as: str, tokens: int, chars: int,
                   of_set: str | None = None) -> None:
        self._keep_in(key, of_set, "counts", counted_as, {"tokens": tokens, "chars": chars})

    # --- managing it ---
    def entries(self) -> list[Entry]:
        """Every document on the shelf, latest added first; damaged ones as "(damaged)"."""
        found = []
        for folder in self.root.iterdir() if self.root.is_dir() else ():
            if not folder.is_dir():
                continue
            meta = self._meta(folder.name) or {}
            reads = meta.get("reads") if isinstance(meta.get("reads"), dict) else {}
            read = reads.get(meta.get("latest"), {}) if reads else {}
            try:
                found.append(Entry(folder.name, str(meta.get("name", "(damaged)")),
                                   float(meta.get("added", 0)), _tree_bytes(folder),
                                   int(read.get("locations", 0)), str(read.get("unit", "pages")),
                                   {k: int(v["tokens"]) for k, v in read.get("counts", {}).items()}))
            except (AttributeError, KeyError, TypeError, ValueError):
                found.append(Entry(folder.name, "(damaged)", 0.0, _tree_bytes(folder), 0, "pages", {}))
        return sorted(found, key=lambda e: -e.added)

    def matching(self, name_or_prefix: str) -> list[Entry]:
        """Entries named exactly so, else whose hash begins with it (4 hex digits at least)."""
        entries = self.entries()
        named = [e for e in entries if e.name == name_or_prefix]
        if named or len(name_or_prefix) < 4:
            return named
        return [e for e in entries if e.sha256.startswith(name_or_prefix.lower())]

    def remove(self, name_or_prefix: str) -> Entry:
        """Delete one document's files. Raises NotOnShelf when nothing, or more than one, matches."""
        found = self.matching(name_or_prefix)
        if len(found) != 1:
            shown = ", ".join(f"{e.name} ({e.sha256[:12]})" for e in found)
            raise NotOnShelf(
                f"No document on the shelf is named {name_or_prefix!r} (see `glm1m shelf list`)."
                if not found else
                f"{len(found)} documents on the shelf match {name_or_prefix!r}: {shown}. Name one "
                f"by its hash's first digits.")
        shutil.rmtree(self.root / found[0].sha256, ignore_errors=True)
        return found[0]

    def used_bytes(self) -> int:
        return _tree_bytes(self.root)

    # --- on disk ---
    def _meta(self, sha256: str) -> dict | None:
        try:
            meta = json.loads((self.root / sha256 / "meta.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        ok = isinstance(meta, dict) and meta.get("format") == FORMAT and "added" in meta
        return meta if ok else None

    def _write_meta(self, sha256: str, meta: dict) -> None:
        write_whole(self.root / sha256 / "meta.json",
                    json.dumps(meta, ensure_ascii=False).encode("utf-8"))

    def _full(self, name: str, needed: int, used: int) -> ShelfFull:
        largest = sorted(self.entries(), key=lambda e: -e.bytes)[:3]
        names = [f"{e.name} ({_mb(e.bytes)})" for e in largest] or said("shelf_nothing_yet")
        who = f" --user {self.user}" if self.user else ""
        return ShelfFull(key="shelf_full", used=_mb(used), cap=_mb(self.max_bytes), name=name,
                         needed=_mb(needed), command=f"glm1m shelf rm NAME{who}", largest=names)


def _part(meta: dict | None, key: ShelfKey, of_set: str | None, make: bool = False) -> dict:
    """This read's notes in `meta`, or those of its set `of_set`: a set of documents asked
    together is kept under one of its documents (asking.settle says which), its name a digest of
    the set's whole text, so no other set shares it. Raises KeyError when there is none (`make`:
    a set's is made; a read's never is: it was removed, or never kept)."""
    read = meta["reads"][key.read] if meta is not None else None
    if not isinstance(read, dict):
        raise KeyError(key.read)
    if of_set is None:
        return read
    sets = read.setdefault("sets", {}) if make else read["sets"]
    found = sets.setdefault(of_set, {}) if make else sets[of_set]
    if not isinstance(found, dict):
        raise KeyError(of_set)
    return found


def _mb(n: int) -> str:
    return f"{n / MB:,.1f} MB" if n >= MB // 10 else f"{n / 1000:,.1f} KB"


def _bytes_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _tree_bytes(folder: Path) -> int:
    return sum(_bytes_of(p) for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0
