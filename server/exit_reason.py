"""Why a server glm1m started ended before it was ready, read from its log: the error line it ended
with, a process of it killed by a signal (and which), and where the log is. `glm1m serve` says
this instead of an exit code alone: vLLM's API server exits 0 when its worker dies of SIGILL."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from glm1m.catalog import Said, said
from glm1m.server import cpu

# process.start writes this line before each start: only what follows the last one is this run's.
START_MARK = "--- glm1m started: "
TAIL_BYTES = 512 * 1024  # more than vLLM writes from a start to its first request
MAX_QUOTE = 300
# vLLM's line prefix when a child process logs: "(EngineCore_DP0 pid=123) ".
CHILD_PREFIX = re.compile(r"^\(\S+ pid=\d+\)\s*")
# vLLM's logger: "ERROR 12-01 22:49:01 [core.py:1100] "; a traceback it logs has it on every line.
LOG_ERROR = re.compile(r"^(?:ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[[^\]]*\] ")
# A traceback's frames, source lines and carets: what surrounds an error, not the error.
TRACEBACK_BODY = re.compile(r"^(?:\s|Traceback \(most recent call last\)|\^+$)")
ERROR_PATTERNS = (
    # A traceback's last line: "ValueError: ...", "vllm.v1.engine.exceptions.EngineDeadError: ...".
    re.compile(r"^(?P<msg>[A-Za-z_][\w.]*(?:Error|Exception)\b.*)"),
    # argparse: "vllm serve: error: argument --dtype: invalid choice: ..."
    re.compile(r"^(?P<msg>[\w .-]+: error: .*)"),
)
# Lines that point at an error above them rather than saying it.
ECHOES = ("see root cause above", "see stack trace (above)", "see stack trace above")
DEATHS = (
    # vllm/v1/executor/multiproc_executor.py
    re.compile(r"Worker proc (?P<name>\S+) died unexpectedly \(exit code: (?P<code>-?\d+)\)"),
    # vllm/v1/utils.py
    re.compile(r"Process (?P<name>\S+) \(PID: \d+\) died with exit code (?P<code>-?\d+)"),
)


@dataclass(frozen=True)
class Death:
    """A process of the server that ended on its own: its name and exit code (-N: signal N)."""
    name: str
    code: int

    def clause(self) -> Said:
        return said("clause_death", name=self.name, ended=ended_said(self.code))


@dataclass(frozen=True)
class Reason:
    """What the log says: the first process that died, and the last error before it."""
    death: Death | None
    error: str | None

    def clauses(self) -> list[Said]:
        found = [self.death.clause()] if self.death else []
        if self.error:
            found.append(said("clause_last_error", error=self.error))
        if self.killed_by(signal.SIGILL) and cpu.has_amx_tiles():
            found.append(said("clause_amx"))
        return found

    def killed_by(self, sig: signal.Signals) -> bool:
        return self.death is not None and self.death.code == -sig


def ended_said(code: int) -> Said:
    """'exited with code 1', or 'was killed by SIGILL (Illegal instruction)' for a code of -4."""
    if code >= 0:
        return said("ended_code", code=code)
    try:
        sig = signal.Signals(-code)
    except ValueError:
        return said("ended_signal_number", signal=-code)
    return said("ended_signal", name=sig.name, meaning=signal.strsignal(sig) or sig.name)


def this_run(log_path: str) -> list[str]:
    """The lines of the log from the last start on (its last TAIL_BYTES)."""
    try:
        with open(log_path, "rb") as log:
            size = log.seek(0, 2)
            log.seek(max(0, size - TAIL_BYTES))
            text = log.read().decode(errors="replace")
    except OSError:
        return []
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(START_MARK)]
    return lines[starts[-1] + 1:] if starts else lines


def error_line(line: str) -> str | None:
    """The message of an error line, without vLLM's prefixes; None for any other line."""
    text = CHILD_PREFIX.sub("", line.rstrip())
    logged = LOG_ERROR.match(text)
    if logged:
        text = text[logged.end():]
    if not text.strip() or TRACEBACK_BODY.match(text):
        return None
    if logged:
        return text.strip()
    for pattern in ERROR_PATTERNS:
        found = pattern.match(text)
        if found:
            return found.group("msg").strip()
    return None


def with_detail(lines: list[str], index: int, error: str) -> str:
    """An exception line with the indented line under it, where pydantic writes what was wrong:
    'ValidationError: 1 validation error for ModelConfig' / '  Value error, User-specified ...'."""
    below = lines[index + 1] if index + 1 < len(lines) else ""
    detail = below.strip()
    if not below[:1].isspace() or not detail or detail.startswith(("File ", "For further information")):
        return error
    return f"{error}: {detail}"


def last_error(lines: list[str]) -> str | None:
    """The last error line that says something itself (not 'see root cause above')."""
    errors = [with_detail(lines, i, e) for i, e in enumerate(map(error_line, lines)) if e]
    telling = [e for e in errors if not any(echo in e.lower() for echo in ECHOES)]
    found = telling or errors
    return shorten(found[-1]) if found else None


def first_death(lines: list[str]) -> tuple[int, Death] | None:
    """The first process of the server that died, and the line that says so: what vLLM logs
    after it (EngineDeadError, 'Executor failed') follows from it."""
    for index, line in enumerate(lines):
        for pattern in DEATHS:
            found = pattern.search(line)
            if found:
                return index, Death(found.group("name"), int(found.group("code")))
    return None


def reason(log_path: str | None) -> Reason:
    """A process's death if one is logged, and the last error before it (else the last error)."""
    lines = this_run(log_path) if log_path else []
    death = first_death(lines)
    if death is None:
        return Reason(None, last_error(lines))
    index, died = death
    return Reason(died, last_error(lines[:index]))


def shorten(text: str) -> str:
    return text if len(text) <= MAX_QUOTE else text[:MAX_QUOTE - 1] + "…"



def exited_said(what: str | Said, returncode: int, log_path: str | None, when: str | Said) -> Said:
    """One sentence: `what` ended (`when`: "before it was ready"), why, and where its log is; by id,
    for a door to say in its language (`what`, `when`: ids, or English)."""
    head = said("ended_head", what=what, ended=ended_said(returncode), when=when)
    return sentence(head, reason(log_path), log_path)


def not_ready_said(what: str | Said, timeout_s: float, log_path: str | None) -> Said:
    return sentence(said("not_ready_head", what=what, seconds=timeout_s), reason(log_path), log_path)


def sentence(head: Said, why: Reason, log_path: str | None) -> Said:
    clauses = why.clauses()
    if log_path:
        clauses.append(said("see_log", log=log_path) if clauses else said("see_log_empty", log=log_path))
    if not clauses:
        return said("ended_plain", head=head)
    joined = clauses[-1]
    for clause in reversed(clauses[:-1]):
        joined = said("clauses_and", first=clause, rest=joined)
    return said("ended_why", head=head, why=joined)
