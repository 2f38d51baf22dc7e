"""The GitHub REST client: base URL and token from the environment, retries, Link pagination.

Two rules carried over from measuring the real API:

* A listing is walked by following ``Link: rel="next"`` verbatim. Issue listings 422 past
  about page 100 and hand out opaque ``after=`` cursors; a client that builds ``page=N``
  itself stops at the wall. (With httpx, requesting a Link URL with ``params={}`` drops
  its query string; ``params=None`` keeps it.)
* The token goes to the configured API's origin (scheme, host, port) and nowhere else: a URL
  on another origin (a Link to another host, a link stored before the API moved) is never
  requested, and a redirect away from it loses the token (httpx drops it). What is stored
  of a URL (a walk's next page, an ETag's key) is relative to the configured API
  (:meth:`GitHubClient.relative_url`), so a moved API (GitHub Enterprise, another port)
  reads it against the new address.
* A 5xx and a connection dropped mid-body are both retried; a rate limit waits (primary:
  until ``x-ratelimit-reset``; secondary: ``retry-after``, or without it a minute, doubling);
  any other 4xx is an answer about a request we built wrong, and asking again cannot fix it.
* Given a cycle's ``budget`` (``extract/budget.py``), every request asks it first and every
  answer tells it what is left: a cycle stops spending before GitHub refuses.
"""

from __future__ import annotations

import email.utils
import os
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from relore.contract.version import __version__
from relore.extract.github_urls import (
    DEFAULT_API_URL,
    graphql_url_for,
    origin_of,
    parse_link_header,
)

_TRANSIENT_ERRORS = (
    httpx.RemoteProtocolError,  # the server closed the connection mid-response
    httpx.ReadError,
    httpx.WriteError,
    httpx.ConnectError,
    httpx.ReadTimeout,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)


class GitHubError(RuntimeError):
    """A request GitHub would not serve; carries the URL and status so a report can name it."""

    def __init__(self, message: str, *, url: str, status: int | None = None):
        super().__init__(f"{message} ({url})" if url else message)
        self.message = message
        self.url = url
        self.status = status


class NotFound(GitHubError):
    pass


@dataclass
class Page:
    url: str
    status: int
    items: list | dict | None
    headers: httpx.Headers
    next_url: str | None

    @property
    def etag(self) -> str | None:
        return self.headers.get("etag")


@dataclass
class ClientStats:
    requests: int = 0
    retries: int = 0
    not_modified: int = 0
    waits: list[float] = field(default_factory=list)
    rate_remaining: int | None = None
    rate_reset: float | None = None


class GitHubClient:
    def __init__(
        self,
        *,
        api_url: str | None = None,
        graphql_url: str | None = None,
        token: str | None = None,
        max_attempts: int | None = None,
        backoff: float | None = None,
        max_wait: float = 900.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        transport: httpx.BaseTransport | None = None,
        env: dict[str, str] | None = None,
    ):
        env = os.environ if env is None else env
        self.api_url = (api_url or env.get("RELORE_GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
        self.graphql_url = (
            graphql_url or env.get("RELORE_GITHUB_GRAPHQL_URL") or graphql_url_for(self.api_url)
        )
        token = token if token is not None else env.get("GITHUB_TOKEN")
        headers = {
            "accept": "application/vnd.github+json",
            "x-github-api-version": "2022-11-28",
            "user-agent": f"relore/{__version__}",
        }
        if token:
            headers["authorization"] = f"Bearer {token}"
        self.authenticated = bool(token)
        # RELORE_GITHUB_ATTEMPTS / RELORE_GITHUB_BACKOFF: tries per request and the first
        # backoff in seconds (doubling, jittered, at most 60 s)
        self.max_attempts = max_attempts or int(env.get("RELORE_GITHUB_ATTEMPTS") or 6)
        self.backoff = (
            backoff if backoff is not None else float(env.get("RELORE_GITHUB_BACKOFF") or 1.0)
        )
        self.max_wait = max_wait
        self.sleep = sleep
        self.clock = clock
        # a cycle's Budget (extract/budget.py): asked before every request, told every answer
        self.budget = None
        self.stats = ClientStats()
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(60.0, connect=10.0),
            transport=transport,
            follow_redirects=True,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def absolute_url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return f"{self.api_url}/{path_or_url.lstrip('/')}"

    def relative_url(self, url: str) -> str | None:
        """``url`` as stored: its path and query relative to the configured API (a GitHub
        Enterprise base keeps its ``/api/v3`` prefix out of it), verbatim. None for a URL on
        another origin or outside the base's path: such a link is dropped, never followed.
        A string already relative (no scheme, no host, no leading slash) is returned as is."""
        parts = urlsplit(url)
        if not parts.scheme and not parts.netloc and not url.startswith("/"):
            return url
        if origin_of(url) is None or origin_of(url) != origin_of(self.api_url):
            return None
        prefix = urlsplit(self.api_url).path.rstrip("/") + "/"
        if not parts.path.startswith(prefix) or parts.fragment:
            return None
        tail = parts.path[len(prefix) :]
        return f"{tail}?{parts.query}" if parts.query else tail

    def _may_request(self, url: str) -> bool:
        """The configured REST or GraphQL API's origin: the only ones the token goes to."""
        origin = origin_of(url)
        return origin is not None and origin in (
            origin_of(self.api_url),
            origin_of(self.graphql_url),
        )

    def _rate_limit_wait(self, response: httpx.Response, attempt: int = 1) -> float | None:
        """Seconds to wait when this response is a rate limit, else None."""
        if response.status_code not in (403, 429):
            return None
        retry_after = response.headers.get("retry-after")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                parsed = email.utils.parsedate_to_datetime(retry_after)
                return max(0.0, parsed.timestamp() - self.clock())
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = float(response.headers.get("x-ratelimit-reset", self.clock() + 60))
            return max(0.0, reset - self.clock()) + 1.0
        if response.status_code == 429 or "secondary rate limit" in _message(response).lower():
            # a secondary limit without retry-after: GitHub asks for at least a minute,
            # longer each time it answers so again
            return 60.0 * 2 ** (attempt - 1)
        return None  # a plain 403: permission, not a limit

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: dict | None = None,
        json: dict | None = None,
        etag: str | None = None,
    ) -> httpx.Response:
        url = self.absolute_url(path_or_url)
        shown = str(httpx.URL(url, params=params)) if params else url  # what errors name
        if not self._may_request(url):
            raise GitHubError(
                f"not requested: it is not on the configured GitHub API ({self.api_url}); "
                "if GitHub now answers there, set RELORE_GITHUB_API_URL to that address",
                url=shown,
            )
        headers = {"if-none-match": etag} if etag else None
        last_problem = "no attempt made"
        for attempt in range(1, self.max_attempts + 1):
            if self.budget is not None:
                self.budget.check("graphql" if url == self.graphql_url else "core", shown)
            try:
                self.stats.requests += 1
                response = self._http.request(
                    method, url, params=params, json=json, headers=headers
                )
                response.read()
            except _TRANSIENT_ERRORS as exc:
                last_problem = f"{type(exc).__name__}: {exc}"
                self._pause(attempt, None)
                continue
            self._note_budget(response)
            if response.status_code == 304:
                self.stats.not_modified += 1
                return response
            wait = self._rate_limit_wait(response, attempt)
            if wait is not None:
                last_problem = f"rate limited ({response.status_code})"
                if wait > self.max_wait:
                    raise GitHubError(
                        f"rate limit resets in {wait:.0f}s, more than the {self.max_wait:.0f}s "
                        "this client waits",
                        url=shown,
                        status=response.status_code,
                    )
                self._pause(attempt, wait)
                continue
            if response.status_code >= 500:
                last_problem = f"HTTP {response.status_code}"
                self._pause(attempt, None)
                continue
            if response.status_code == 404:
                raise NotFound("not found", url=shown, status=404)
            if response.status_code >= 400:
                raise GitHubError(
                    f"HTTP {response.status_code}: {_message(response)}",
                    url=shown,
                    status=response.status_code,
                )
            return response
        raise GitHubError(
            f"gave up after {self.max_attempts} attempts, last: {last_problem}", url=shown
        )

    def _note_budget(self, response: httpx.Response) -> None:
        if self.budget is not None:
            self.budget.observe(response.headers)
        remaining = response.headers.get("x-ratelimit-remaining")
        if remaining is not None and remaining.isdigit():
            self.stats.rate_remaining = int(remaining)
            reset = response.headers.get("x-ratelimit-reset", "")
            self.stats.rate_reset = float(reset) if reset.isdigit() else None

    def _pause(self, attempt: int, wait: float | None) -> None:
        if attempt >= self.max_attempts:
            return
        self.stats.retries += 1
        if wait is None:
            wait = min(60.0, self.backoff * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
        self.stats.waits.append(wait)
        self.sleep(wait)

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        """POST a GraphQL query; return ``{"data": ..., "errors": [...]}``. A rate-limit
        error inside a 200 waits and retries like a REST rate limit; other errors (a
        NOT_FOUND for one aliased field, say) are the caller's to read."""
        for attempt in range(1, self.max_attempts + 1):
            response = self.request(
                "POST", self.graphql_url, json={"query": query, "variables": variables or {}}
            )
            try:
                body = response.json()
            except ValueError:
                self._pause(attempt, None)
                continue
            errors = body.get("errors") or []
            if any(e.get("type") == "RATE_LIMITED" for e in errors):
                reset = float(response.headers.get("x-ratelimit-reset", self.clock() + 60))
                self._pause(attempt, max(1.0, reset - self.clock()))
                continue
            if body.get("data") is None and errors:
                raise GitHubError(
                    f"GraphQL error: {errors[0].get('message', errors[0])}", url=self.graphql_url
                )
            return body
        raise GitHubError(
            f"GraphQL gave up after {self.max_attempts} attempts", url=self.graphql_url
        )

    def get_json(self, path_or_url: str, params: dict | None = None):
        return self.request("GET", path_or_url, params=params).json()

    def get_page(
        self, path_or_url: str, params: dict | None = None, etag: str | None = None
    ) -> Page:
        """One page. A 200 whose body is not JSON (an HTML error page, a body cut short) is
        asked for again; one that never parses is an error naming the URL."""
        for attempt in range(1, self.max_attempts + 1):
            response = self.request("GET", path_or_url, params=params, etag=etag)
            if response.status_code == 304:
                items = None
                break
            try:
                items = response.json()
                break
            except ValueError:
                self._pause(attempt, None)
        else:
            raise GitHubError(
                f"the body is not JSON after {self.max_attempts} attempts "
                f"({response.headers.get('content-type', 'no content-type')})",
                url=str(response.url),
                status=response.status_code,
            )
        links = parse_link_header(response.headers.get("link"))
        return Page(
            url=str(response.url),
            status=response.status_code,
            items=items,
            headers=response.headers,
            next_url=links.get("next"),
        )

    def paginate(
        self, path: str, params: dict | None = None, etag: str | None = None
    ) -> Iterator[Page]:
        """Every page of a listing: the first from ``path`` + ``params``, each next one from
        the previous page's ``Link: rel="next"`` exactly as GitHub wrote it. With ``etag``
        the first page is conditional; a 304 is the only page (nothing changed)."""
        page = self.get_page(path, params=params, etag=etag)
        yield page
        while page.next_url and page.status != 304:
            page = self.get_page(page.next_url, params=None)
            yield page


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return response.text[:200]
