"""What every subcommand writes for a person: one line on stderr, prefixed `glm1m:`, so stdout
stays for the result itself (an answer, a plan's flags). A UserFacingError is said here, in the
one place, in the CLI's language: GLM1M_LANG, else the locale (LANG=zh_CN.UTF-8 reads Chinese)."""

from __future__ import annotations

import sys

from pydantic import ValidationError

from glm1m.catalog import EN, Said, language_of
from glm1m.errors import UserFacingError
from glm1m.settings import Locale, Settings

BAD_INPUT = 2


def say(text: str | Said) -> None:
    """A line for a person on stderr; a Said in the CLI's language."""
    shown = text.render(language()) if isinstance(text, Said) else text
    print(f"glm1m: {shown}", file=sys.stderr, flush=True)


def language() -> str:
    """EN or ZH, from the settings as they are now (while another GLM1M_* value is bad, from
    GLM1M_LANG or the locale alone)."""
    try:
        return language_of(Settings().lang)
    except ValidationError:
        try:
            return language_of(Locale().lang)
        except ValidationError:
            return EN


def fail(what: str | Said | UserFacingError, code: int = BAD_INPUT) -> int:
    """Say why nothing (more) was done (in the CLI's language); the exit code to return."""
    say(what.in_language(language()) if isinstance(what, UserFacingError) else what)
    return code
