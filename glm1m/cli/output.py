"""What every subcommand writes for a person: one line on stderr, prefixed `glm1m:`, so stdout
stays for the result itself (an answer, a plan's flags)."""

from __future__ import annotations

import sys

BAD_INPUT = 2


def say(text: str) -> None:
    print(f"glm1m: {text}", file=sys.stderr, flush=True)


def fail(text: str, code: int = BAD_INPUT) -> int:
    """Say why nothing (more) was done; the exit code to return."""
    say(text)
    return code
