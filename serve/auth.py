"""Who may call the API: bearer tokens with scopes, or nobody but this machine.

``RELORE_API_TOKENS`` holds ``TOKEN:scope,scope`` entries separated by ``;`` or newlines
(scopes: ``read``, ``label``). With none configured the service listens on loopback only,
unless the operator says ``--trust-network`` (the network in front of it is the perimeter).
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
