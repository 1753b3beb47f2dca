"""User-facing failures: each carries the sentence the user sees."""


class UserFacingError(Exception):
    """An error whose message is written for the person using glm1m."""


class ServerUnavailable(UserFacingError):
    """The model server cannot be reached (stopped, starting, or crashed)."""


class ServerBusy(UserFacingError):
    """The model server answered 429/503: overloaded or restarting."""


class ContextTooLong(UserFacingError):
    """The prompt does not fit the served context window."""


class ServerError(UserFacingError):
    """The model server refused or failed a request for another reason."""
