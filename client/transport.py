"""Talking to the daemon: stdlib ``urllib`` only (invariant 1: no HTTP stack in the client).

``RELORE_API`` must be an ``http(s)://host[:port]`` URL (``BadApi`` otherwise). A redirect to
another origin is refused, never followed (urllib would carry the token there), and an
answer that is not relore's (no version header, not JSON, not HTTP) is ``NotRelore``: one
line naming ``RELORE_API``, never the other server's page.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request

from relore.contract import wire
from relore.contract.version import __version__


class DaemonDown(RuntimeError):
    """Nothing answered at the daemon's address; never confused with an empty result."""


class NotRelore(DaemonDown):
    """Something answered at the daemon's address, but not a relore daemon."""


class BadApi(ValueError):
    """``RELORE_API`` is not an http(s) URL."""


class DaemonError(RuntimeError):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class VersionMismatch(RuntimeError):
    pass


def _origin(url: str) -> tuple[str, str]:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme.lower(), f"{(parts.hostname or '').lower()}:{port}"


def check_api(api: str) -> None:
    """Refuse a ``RELORE_API`` that is not an ``http(s)://host[:port]`` URL, before a request."""
    try:
        parts = urllib.parse.urlsplit(api)
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadApi(
            f"RELORE_API={api[:200]!r} is not an http(s) URL: "
            f"set it like {wire.DEFAULT_API} (the address `relored serve` prints)"
        )


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only within the daemon's origin: urllib would otherwise send the
    ``Authorization`` header to whatever host the redirect names."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        target = urllib.parse.urljoin(req.full_url, newurl)
        if _origin(target) != _origin(req.full_url):
            raise NotRelore(
                f"RELORE_API answered with a redirect to another origin "
                f"({_one_line(target)}): not followed, the token stays here"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_opener = urllib.request.build_opener(_SameOriginRedirects)


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _not_relore(api: str, what: str) -> NotRelore:
    return NotRelore(f"no relore daemon at RELORE_API={api}: {what}")


def get(api: str, path: str, params: dict, timeout: float = 30.0, token: str | None = None) -> dict:
    check_api(api)
    # a list value repeats its key (file=a&file=b)
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
    url = f"{api.rstrip('/')}{wire.API_PREFIX}/{path}" + (f"?{query}" if query else "")
    headers = {wire.CLIENT_HEADER: __version__, "accept": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with _opener.open(request, timeout=timeout) as response:
            daemon_version = response.headers.get(wire.VERSION_HEADER)
            body = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        daemon_version = exc.headers.get(wire.VERSION_HEADER) if exc.headers else None
        if daemon_version is None:  # another server's error page, never shown
            what = f"it answered {exc.code} without relore's version header"
            raise _not_relore(api, what) from None
        message = _error_message(exc.read())
        if exc.code == wire.UPGRADE_REQUIRED:
            raise VersionMismatch(message) from None
        raise DaemonError(exc.code, message) from None
    except NotRelore:
        raise
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DaemonDown(f"no relore daemon at {api} ({_one_line(reason)})") from None
    except (http.client.HTTPException, OSError) as exc:  # not HTTP at all (a banner, TLS)
        what = f"what answered does not speak HTTP ({type(exc).__name__})"
        raise _not_relore(api, what) from None
    if daemon_version is None:
        raise _not_relore(api, f"it answered {status} without relore's version header")
    if not wire.compatible(daemon_version):
        raise VersionMismatch(wire.mismatch_message(__version__, daemon_version))
    try:
        return json.loads(body)
    except ValueError:
        raise _not_relore(api, "its answer is not JSON") from None


def _error_message(body: bytes) -> str:
    try:
        return str(json.loads(body).get("error", body[:200].decode("utf-8", "replace")))
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")
