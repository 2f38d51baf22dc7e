"""Talking to the daemon: stdlib ``urllib`` only (invariant 1: no HTTP stack in the client)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

from relore.client import wire
from relore.client.version import __version__


class DaemonDown(RuntimeError):
    """Nothing answered at the daemon's address; never confused with an empty result."""


class DaemonError(RuntimeError):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class VersionMismatch(RuntimeError):
    pass


def get(api: str, path: str, params: dict, timeout: float = 30.0, token: str | None = None) -> dict:
    # a list value repeats its key (file=a&file=b)
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None}, doseq=True)
    url = f"{api.rstrip('/')}{wire.API_PREFIX}/{path}" + (f"?{query}" if query else "")
    headers = {wire.CLIENT_HEADER: __version__, "accept": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            daemon_version = response.headers.get(wire.VERSION_HEADER)
            body = response.read()
    except urllib.error.HTTPError as exc:
        daemon_version = exc.headers.get(wire.VERSION_HEADER) if exc.headers else None
        message = _error_message(exc.read())
        if exc.code == wire.UPGRADE_REQUIRED:
            raise VersionMismatch(message) from None
        raise DaemonError(exc.code, message) from None
    except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DaemonDown(f"no relore daemon at {api} ({reason})") from None
    if daemon_version is None:
        raise VersionMismatch(
            f"{api} did not say its version: it is not a relore daemon, or one too old to speak {__version__}"
        )
    if not wire.compatible(daemon_version):
        raise VersionMismatch(wire.mismatch_message(__version__, daemon_version))
    return json.loads(body)


def _error_message(body: bytes) -> str:
    try:
        return str(json.loads(body).get("error", body[:200].decode("utf-8", "replace")))
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")
