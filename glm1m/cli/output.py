"""What every subcommand writes for a person: one line on stderr, prefixed `glm1m:`, so stdout
stays for the result itself (an answer, a plan's flags). A UserFacingError is said here, in the
one place, in the CLI's language: GLM1M_LANG, else the locale (LANG=zh_CN.UTF-8 reads Chinese)."""

from __future__ import annotations

import sys

from pydantic import ValidationError

from glm1m.catalog import EN, language_of
from glm1m.errors import UserFacingError
from glm1m.settings import Settings

BAD_INPUT = 2


def say(text: str) -> None:
    print(f"glm1m: {text}", file=sys.stderr, flush=True)


def language() -> str:
    """EN or ZH, from the settings as they are now (English while a GLM1M_* value is bad)."""
    try:
        return language_of(Settings().lang)
    except ValidationError:
        return EN


def fail(said: str | UserFacingError, code: int = BAD_INPUT) -> int:
    """Say why nothing (more) was done (an error in the CLI's language); the exit code to return."""
    say(said.in_language(language()) if isinstance(said, UserFacingError) else said)
    return code
