"""Where GitHub is and what its addresses say: the REST and GraphQL bases, an origin compared
(the token goes to the configured origin only), a Link header read, and the origin a stored
run error could not reach. Stdlib only."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_GRAPHQL_URL = "https://api.github.com/graphql"
_LINK_RE = re.compile(r'<([^>]+)>\s*;\s*rel="([^"]+)"')


def graphql_url_for(api_url: str) -> str:
    """GraphQL's address beside a REST base: GitHub's own, GitHub Enterprise's
    ``https://host/api/v3`` → ``https://host/api/graphql``, else ``{base}/graphql``."""
    if api_url.rstrip("/") == DEFAULT_API_URL:
        return DEFAULT_GRAPHQL_URL
    if api_url.rstrip("/").endswith("/api/v3"):
        return api_url.rstrip("/")[: -len("/v3")] + "/graphql"
    return api_url.rstrip("/") + "/graphql"


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an absolute http(s) URL with no user info, else None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def same_origin(a: str, b: str) -> bool:
    """Whether two absolute http(s) URLs share scheme, host and port."""
    return origin_of(a) is not None and origin_of(a) == origin_of(b)


# A request given up because nothing answered (no listener, no route, no name): the message
# `request` raises, "gave up after N attempts, last: ConnectError: … (URL)", as a run stores it
_UNREACHABLE = re.compile(r"gave up after \d+ attempts, last: Connect(?:Error|Timeout)\b")
_NAMED_ORIGIN = re.compile(r"\((https?://[^/\s()?#]+)")


def unreachable_origin(error: str | None) -> str | None:
    """The origin (``scheme://host:port``) a stored run error could not connect to, else None:
    asking the same address again cannot help, unlike a 5xx or a dropped connection."""
    found = _UNREACHABLE.search(error or "")
    if found is None:
        return None
    named = _NAMED_ORIGIN.findall(error[found.end() :])
    return named[-1] if named else None


def parse_link_header(value: str | None) -> dict[str, str]:
    if not value:
        return {}
    return {rel: url for url, rel in _LINK_RE.findall(value)}
