"""Who may call the API: bearer tokens with scopes, or nobody but this machine.

``RELORE_API_TOKENS`` holds ``TOKEN:scope,scope`` entries separated by ``;`` or newlines
(scopes: ``read``, ``label``). With none configured the service listens on loopback only,
unless the operator says ``--trust-network`` (the network in front of it is the perimeter),
and answers only requests whose ``Host`` is loopback, its ``--host`` or a name in
``RELORE_ALLOWED_HOSTS`` (DNS rebinding). A ``label``-only token can label and read nothing.
"""

from __future__ import annotations

import hmac
import ipaddress

SCOPES = ("read", "label")


class TokenConfigError(ValueError):
    pass


def parse_tokens(value: str | None) -> dict[str, frozenset[str]]:
    tokens: dict[str, frozenset[str]] = {}
    for raw in (value or "").replace("\n", ";").split(";"):
        entry = raw.strip()
        if not entry:
            continue
        token, _, scopes = entry.partition(":")
        token = token.strip()
        granted = frozenset(s.strip() for s in (scopes or "read").split(",") if s.strip())
        if len(token) < 16:
            raise TokenConfigError("each RELORE_API_TOKENS token must be at least 16 characters")
        unknown = granted - set(SCOPES)
        if unknown:
            raise TokenConfigError(
                f"unknown scopes in RELORE_API_TOKENS: {', '.join(sorted(unknown))}"
            )
        tokens[token] = granted
    return tokens


def scopes_for(
    tokens: dict[str, frozenset[str]], authorization: str | None
) -> frozenset[str] | None:
    """The scopes a request's ``Authorization: Bearer`` header grants; None if it grants none."""
    if not authorization or not authorization.lower().startswith("bearer "):
        return None
    presented = authorization[7:].strip()
    for token, scopes in tokens.items():
        if hmac.compare_digest(token.encode(), presented.encode()):
            return scopes
    return None


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
LABEL_PATH = "/api/v1/label"


def scope_for_path(path: str) -> str:
    """The scope a route needs: ``label`` to post a label, ``read`` for everything else."""
    return "label" if path.rstrip("/") == LABEL_PATH else "read"


def host_name(header: str) -> str:
    """A ``Host`` header's name, lower-cased, without its port or IPv6 brackets."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    name, _, port = value.rpartition(":")
    return name if name and port.isdigit() else value.rstrip(":")


def allowed_hosts(bind: str, configured: str | None) -> tuple[str, ...]:
    """The names a token-less daemon answers to besides loopback: its ``--host`` when that is
    a name or a specific address, and ``RELORE_ALLOWED_HOSTS`` (comma-separated; ``*``: any)."""
    names = [h.strip().lower() for h in (configured or "").split(",") if h.strip()]
    if bind not in ("0.0.0.0", "::", ""):
        names.append(bind.strip("[]").lower())
    return tuple(dict.fromkeys(names))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, tokens: dict, trust_network: bool) -> None:
    """Refuse to serve a network without tokens unless the operator says so."""
    if not tokens and not trust_network and not is_loopback(host):
        raise TokenConfigError(
            f"refusing to listen on {host} with no RELORE_API_TOKENS: set tokens, listen on "
            "127.0.0.1, or pass --trust-network if the network in front of it is the perimeter"
        )
