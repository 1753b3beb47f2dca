"""Every failure a person sees: each is a UserFacingError carrying the sentence to show.

The doors (CLI, web app) show `str(error)` in one place each; nothing below them prints.
"""


class UserFacingError(Exception):
    """An error whose message is written for the person using glm1m."""


# The model server, seen from a client.
class ServerUnavailable(UserFacingError):
    """The model server cannot be reached (stopped, starting, or crashed)."""


class ServerBusy(UserFacingError):
    """The model server answered 429/503: overloaded or restarting."""


class ContextTooLong(UserFacingError):
    """The prompt does not fit the served context window."""


class ServerTooSlow(UserFacingError):
    """The model server did not begin an answer within GLM1M_FIRST_TOKEN_TIMEOUT_S."""


class ServerError(UserFacingError):
    """The model server refused or failed a request for another reason."""


# Inputs.
class DocumentError(UserFacingError):
    """A document cannot be used as uploaded; the message says why and what to do."""


class CsvError(UserFacingError):
    """A table cannot be read as asked; the message says why and what to do."""


class JobAlreadyRunning(UserFacingError):
    """The same job (same input, settings and output) is running elsewhere at this moment."""


# Local state: accounts, secrets, history.
class AccountError(UserFacingError):
    """A user name, password or users file is not acceptable; the message says why."""


class SecretFileError(UserFacingError):
    """A secret file holds nothing, or cannot be read or written."""


class HistoryError(UserFacingError):
    """The history database cannot be opened or does not fit; the message says what to do."""


# Sizing and starting the model server.
class PlanError(UserFacingError):
    """The GPUs cannot hold what was asked (or the plan's inputs make no sense)."""


class StartFailed(UserFacingError):
    """A child process exited or never became ready; the message says which and where to look."""


# Configuration.
class SettingsError(UserFacingError):
    """A GLM1M_* variable (in the environment or .env) holds a value glm1m cannot use."""
