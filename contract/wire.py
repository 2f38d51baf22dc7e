"""The version handshake, both ends: stdlib only, because the client imports it.

Every ``/api/v1`` request declares ``x-relore-client``; a daemon whose version differs answers
426, and every response carries ``x-relore-version`` so a client can catch a daemon too old
to enforce the rule. One version, written once, in ``relore.contract.version``.
"""

from __future__ import annotations

from relore.contract.version import __version__

CLIENT_HEADER = "x-relore-client"
VERSION_HEADER = "x-relore-version"
API_PREFIX = "/api/v1"
DEFAULT_API = "http://127.0.0.1:8080"
UPGRADE_REQUIRED = 426


def compatible(other: str | None) -> bool:
    """True when the other end speaks this version; a missing header is not a mismatch."""
    return other is None or other.strip() == __version__


def _key(version: str) -> tuple:
    parts = []
    for piece in version.strip().split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else -1)
    return tuple(parts)


def mismatch_message(client_version: str, daemon_version: str) -> str:
    """Which side to upgrade, in words a person can act on."""
    head = f"version mismatch: client {client_version}, daemon {daemon_version}; "
    if _key(client_version) < _key(daemon_version):
        return head + f"upgrade the client: pip install 'relore=={daemon_version}'"
    if _key(client_version) > _key(daemon_version):
        return (
            head
            + f"upgrade the daemon to {client_version} (or install relore=={daemon_version} here)"
        )
    return head + "install the same relore version on both ends"
