"""Every failure a person sees: each is a UserFacingError carrying the sentence to show, by its id
in the catalog (glm1m/catalog/) and its named fields.

The doors (CLI, web app) show `error.in_language(lang)` in one place each; nothing below them
prints. `str(error)` is the English sentence.
"""

from __future__ import annotations

from typing import Any, ClassVar, Self

from glm1m.catalog import EN, Said, render


class UserFacingError(Exception):
    """An error whose message is written for the person using glm1m.

    Raised as `DocumentError(key="doc_empty", name=name)`: an id of glm1m/catalog and its fields.
    A sentence without an id (`ServerError(f"... {detail}")`, for the rare ones) is English; in
    another language it reads after the class's lead ("文档无法使用：…")."""

    lead: ClassVar[str] = "lead_error"  # the catalog id that leads a sentence without an id
    exit_code: ClassVar[int] = 2  # what `glm1m` exits with when a command ends on it (cli/main.py)

    def __init__(self, sentence: str = "", *, key: str | None = None, **fields: Any) -> None:
        self.key, self.fields = key, fields
        super().__init__(render(EN, key, **fields) if key is not None else sentence)

    def in_language(self, lang: str) -> str:
        """The sentence in `lang` (glm1m.catalog.EN or ZH)."""
        if self.key is not None:
            return render(lang, self.key, **self.fields)
        return str(self) if lang == EN else f"{render(lang, self.lead)}：{self}"

    @classmethod
    def of(cls, sentence: Said) -> Self:
        """The error that says `sentence` (an id and its fields, built elsewhere)."""
        return cls(key=sentence.key, **sentence.fields)

    def as_said(self) -> Said | str:
        """What it says, as a field of another sentence: its id and fields (said in the other
        sentence's language), or its English where it has no id."""
        return Said(self.key, self.fields) if self.key is not None else str(self)


# The model server, seen from a client.
class ServerUnavailable(UserFacingError):
    """The model server cannot be reached (stopped, starting, or crashed)."""
    lead = "lead_server_unavailable"


class ServerBusy(UserFacingError):
    """The model server answered 429/503: overloaded or restarting."""
    lead = "lead_server_busy"


class ContextTooLong(UserFacingError):
    """The prompt does not fit the served context window."""
    lead = "lead_context_too_long"


class ServerTooSlow(UserFacingError):
    """The model server did not begin an answer within GLM1M_FIRST_TOKEN_TIMEOUT_S."""
    lead = "lead_server_too_slow"


class ServerError(UserFacingError):
    """The model server refused or failed a request for another reason."""
    lead = "lead_server_error"


# Inputs.
class DocumentError(UserFacingError):
    """A document cannot be used as uploaded; the message says why and what to do."""
    lead = "lead_document"


class LimitReached(DocumentError):
    """A document, or a user's reading, is past one of the server's limits (a GLM1M_* setting):
    the message names the setting (glm1m/documents/limits.py checks them)."""


class TableError(UserFacingError):
    """A table cannot be read as asked; the message says why and what to do."""
    lead = "lead_table"


class GridError(UserFacingError):
    """A grid's questions, documents or output cannot be used as given (glm1m/grid/)."""
    lead = "lead_grid"


class JobAlreadyRunning(UserFacingError):
    """The same job (same input, settings and output) is running elsewhere at this moment."""
    lead = "lead_job_running"


# Local state: accounts, secrets, history.
class AccountError(UserFacingError):
    """A user name, password or users file is not acceptable; the message says why."""
    lead = "lead_account"


class SecretFileError(UserFacingError):
    """A secret file holds nothing, or cannot be read or written."""
    lead = "lead_secret"


class HistoryError(UserFacingError):
    """The history database cannot be opened or does not fit; the message says what to do."""
    lead = "lead_history"


# Sizing and starting the model server.
class PlanError(UserFacingError):
    """The GPUs cannot hold what was asked (or the plan's inputs make no sense)."""
    lead = "lead_plan"


class StartFailed(UserFacingError):
    """A child process exited or never became ready; the message says which and where to look."""
    lead = "lead_start"
    exit_code = 1  # a server that did not start or stopped, not a bad input (cli/main.py says it)


# Configuration.
class SettingsError(UserFacingError):
    """A GLM1M_* variable (in the environment or .env) holds a value glm1m cannot use."""
    lead = "lead_settings"
