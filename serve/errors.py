"""Every refusal serve answers, as one exception hierarchy.

A route (or anything it calls) raises a ``RequestError``; ``create_app`` maps the whole
hierarchy to a response with one Starlette exception handler, and every body goes through
the one encoder and sanitiser (``responses.error_response``): ``{"error": message, ...}``
plus any extra fields the error names (``indexed``, ``command``). Nothing else builds an
error body.
"""

from __future__ import annotations

from relore.contract import wire


class RequestError(Exception):
    """A request answered with a refusal: its status, its message, and any extra fields."""

    status = 400

    def __init__(self, message: str, *, retry_after: int | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after
        self.extra = extra

    @property
    def headers(self) -> dict[str, str]:
        return {} if self.retry_after is None else {"retry-after": str(self.retry_after)}


class BadRequest(RequestError):
    """A request we will not run, and why (400): the caller can fix it."""

    status = 400


class Unauthorized(RequestError):
    status = 401


class Forbidden(RequestError):
    status = 403


class NotFound(RequestError):
    """What was asked for is not here (404): the client's NOT_INDEXED exit."""

    status = 404


class NotIndexed(NotFound):
    """A repository the index holds nothing for: not an empty answer (404, with ``indexed``)."""


class TooLarge(RequestError):
    status = 413


class UnsupportedMediaType(RequestError):
    status = 415


class UpgradeRequired(RequestError):
    """The client declares another version than the daemon's (426)."""

    status = wire.UPGRADE_REQUIRED


class ClientGone(RequestError):
    """The client disconnected and its work was stopped (nginx's 499: nobody reads it)."""

    status = 499

    def __init__(self, message: str = "the client went away: its work was stopped"):
        super().__init__(message)


class Unavailable(RequestError):
    """The daemon cannot answer yet (503): no index, no clone, a dependency down or slow.
    ``retry_after`` when retrying soon is the fix."""

    status = 503
