"""The ⚙ panel's values a user chose, kept per user, so that New Chat and the next visit start
with them instead of the defaults (issue 34: a translation target set in ⚙ went back to the
default on New Chat). Kept where the history is: for a logged-in user or the local user of a page
on loopback, in DATA_DIR/chosen_settings/<user>.json; with nobody to keep them for, nothing is.

Only what the user changed is written: a system prompt equal to the page's default is not, so a
user who never touched it gets the default of whichever language the page is in next time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glm1m.chainlit_app.session import LANGUAGES
from glm1m.files import folder_name, replace_when_done
from glm1m.settings import Settings


@dataclass(frozen=True)
class Chosen:
    """What a user set in ⚙; None: not chosen (the default holds)."""
    system_prompt: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    target_language: str | None = None
    source_language: str | None = None  # a language of LANGUAGES; None: detected (the default)
    bilingual: bool | None = None  # a PDF comes back with original and translated pages in turn
    start_at_once: bool | None = None  # a translation starts without the languages question

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


def chosen_path(settings: Settings, user: str | None) -> Path | None:
    return None if user is None else settings.data_dir / "chosen_settings" / f"{folder_name(user)}.json"


def load(settings: Settings, user: str | None) -> Chosen:
    """The user's kept choices; a missing or damaged file, or a value out of range, is not chosen."""
    path = chosen_path(settings, user)
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
    except (OSError, ValueError):
        raw = {}
    raw = raw if isinstance(raw, dict) else {}
    return Chosen(
        system_prompt=_of(raw, "system_prompt", str, lambda v: bool(v.strip())),
        temperature=_of(raw, "temperature", float, lambda v: 0 <= v <= 2),
        max_tokens=_of(raw, "max_tokens", int, lambda v: 16 <= v <= 8192),
        target_language=_of(raw, "target_language", str, lambda v: v in LANGUAGES),
        source_language=_of(raw, "source_language", str, lambda v: v in LANGUAGES),
        bilingual=raw.get("bilingual") if isinstance(raw.get("bilingual"), bool) else None,
        start_at_once=raw.get("start_at_once") if isinstance(raw.get("start_at_once"), bool) else None,
    )


def save(settings: Settings, user: str | None, chosen: Chosen) -> None:
    """Kept for `user` (nothing without one). A disk that refuses it loses the choice for the next
    chat only; the chat at hand has it already."""
    path = chosen_path(settings, user)
    if path is None:
        return
    try:
        with replace_when_done(path) as writing:
            writing.write_text(json.dumps(chosen.as_json(), ensure_ascii=False), encoding="utf-8")
    except OSError:
        pass


def _of(raw: dict[str, Any], key: str, kind: type, fits: Any) -> Any:
    value: Any = raw.get(key)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        return None
    return value if fits(value) else None  # a range check: NaN and infinities fail it too
