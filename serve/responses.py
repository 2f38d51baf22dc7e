"""The service's JSON responses: one encoder for every route (UTF-8 as is, dates as text),
and the one shape of every error body."""

from __future__ import annotations

import json

from starlette.responses import Response

from relore.contract.sanitize import clean
from relore.serve.errors import RequestError


def json_response(payload: dict, status_code: int = 200) -> Response:
    body = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8")
    return Response(body, status_code=status_code, media_type="application/json")


def error_response(status_code: int, message: str, **extra) -> Response:
    """An error: its message may name a retrieved path or git's own words, so it is
    sanitised like any page (one line, nothing invisible)."""
    return json_response(clean({"error": message, **extra}), status_code)


def refusal(exc: RequestError) -> Response:
    """A ``RequestError`` as its response (the exception handler's, and the middlewares')."""
    response = error_response(exc.status, exc.message, **exc.extra)
    response.headers.update(exc.headers)
    return response
