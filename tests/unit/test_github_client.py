"""The GitHub client's retry and pagination rules, against scripted HTTP responses."""

from __future__ import annotations

import socket

import httpx
import pytest
from fixtures import http_trap

from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.github_urls import parse_link_header, unreachable_origin

CURSOR_NEXT = "https://api.example/repositories/42/issues?per_page=2&after=Y3Vyc29yOnYyOpK0MjAyNC0w%3D%3D&page=2"


def _client(handler, **kwargs) -> GitHubClient:
    return GitHubClient(
        api_url="https://api.example",
        token="t0ken",
        transport=httpx.MockTransport(handler),
        sleep=lambda _: None,
        env={},
        **kwargs,
    )


def test_following_link_keeps_the_cursor_query_verbatim():
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if "after=" in str(request.url):
            return httpx.Response(200, json=[{"id": 3}])
        return httpx.Response(
            200, json=[{"id": 1}, {"id": 2}], headers={"link": f'<{CURSOR_NEXT}>; rel="next"'}
        )

    with _client(handler) as client:
        pages = list(client.paginate("repos/o/r/issues", params={"per_page": 2, "state": "all"}))
    assert [len(p.items) for p in pages] == [2, 1]
    assert seen[1] == CURSOR_NEXT, "the next page must be requested exactly as Link wrote it"


def test_link_header_with_several_relations_parses_each():
    links = parse_link_header(
        '<https://a/x?page=2>; rel="next", <https://a/x?page=9>; rel="last", '
        '<https://a/x?before=abc>; rel="prev"'
    )
    assert links == {
        "next": "https://a/x?page=2",
        "last": "https://a/x?page=9",
        "prev": "https://a/x?before=abc",
    }


def test_server_error_is_retried_until_it_answers():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(502 if len(calls) < 3 else 200, json={"ok": True})

    with _client(handler) as client:
        assert client.get_json("repos/o/r") == {"ok": True}
        assert client.stats.retries == 2


def test_connection_dropped_mid_body_is_retried():
    calls = []

    def handler(request):
        calls.append(1)
        if len(calls) == 1:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete body")
        return httpx.Response(200, json=[])

    with _client(handler) as client:
        assert client.get_json("repos/o/r/issues") == []
    assert len(calls) == 2


def test_request_we_built_wrong_is_not_retried():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(
            422, json={"message": "Pagination with the page parameter is not supported"}
        )

    with _client(handler) as client, pytest.raises(GitHubError) as info:
        client.get_json("repos/o/r/issues", params={"page": 101})
    assert len(calls) == 1
    assert info.value.status == 422
    assert "page=101" in info.value.url


def test_secondary_rate_limit_waits_retry_after_then_succeeds():
    waits = []
    calls = []

    def handler(request):
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(403, headers={"retry-after": "7"}, json={"message": "secondary"})
        return httpx.Response(200, json={})

    client = GitHubClient(
        api_url="https://api.example",
        transport=httpx.MockTransport(handler),
        sleep=waits.append,
        env={},
    )
    assert client.get_json("x") == {}
    assert waits == [7.0]


def test_endless_server_errors_end_in_an_error_naming_the_url():
    with (
        _client(lambda r: httpx.Response(504), max_attempts=3) as client,
        pytest.raises(GitHubError) as info,
    ):
        client.get_json("repos/o/r/pulls/comments", params={"per_page": 100})
    assert "pulls/comments" in str(info.value)
    assert "HTTP 504" in str(info.value)


def test_token_and_api_url_come_from_the_environment():
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(200, json={})

    client = GitHubClient(
        transport=httpx.MockTransport(handler),
        env={"GITHUB_TOKEN": "abc", "RELORE_GITHUB_API_URL": "http://127.0.0.1:1/api/v3/"},
    )
    client.get_json("repos/o/r")
    assert str(seen[0].url) == "http://127.0.0.1:1/api/v3/repos/o/r"
    assert seen[0].headers["authorization"] == "Bearer abc"


@pytest.mark.parametrize(
    ("api", "graphql"),
    [
        ("https://api.github.com", "https://api.github.com/graphql"),
        ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/graphql"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765/graphql"),
    ],
)
def test_graphql_address_follows_the_rest_base_unless_set(api, graphql):
    assert GitHubClient(env={"RELORE_GITHUB_API_URL": api}).graphql_url == graphql
    explicit = {"RELORE_GITHUB_API_URL": api, "RELORE_GITHUB_GRAPHQL_URL": "http://x/gql"}
    assert GitHubClient(env=explicit).graphql_url == "http://x/gql"


def _real_client(api_url: str) -> GitHubClient:
    return GitHubClient(api_url=api_url, token="t0ken", sleep=lambda _: None, env={})


def test_a_next_link_to_another_origin_is_not_followed_with_the_token():
    """GitHub's Link header names the next page; one naming another host (a stale or moved
    address, another port) must never get the configured token, nor any request."""
    next_link = '<{}/repositories/42/issues?after=Y3Vy&page=2>; rel="next"'
    with (
        http_trap.serve(body=[{"id": 9}]) as elsewhere,
        http_trap.serve(body=[{"id": 1}], headers={"link": next_link.format(elsewhere.url)}) as api,
        _real_client(api.url) as client,
    ):
        pages = client.paginate("repos/o/r/issues", {"per_page": 1})
        assert next(pages).items == [{"id": 1}]
        with pytest.raises(GitHubError) as info:
            next(pages)
    assert elsewhere.seen == []
    assert api.authorizations == ["Bearer t0ken"]
    assert elsewhere.url in str(info.value) and "RELORE_GITHUB_API_URL" in str(info.value)


def test_a_next_link_on_the_configured_host_under_a_path_prefix_is_followed():
    """GitHub Enterprise's API lives under /api/v3: its Link headers keep the prefix."""
    with (
        http_trap.serve(
            body=[{"id": 1}],
            headers={"link": '<{url}/api/v3/repositories/42/issues?after=Y3Vy>; rel="next"'},
        ) as api,
        _real_client(f"{api.url}/api/v3") as client,
    ):
        pages = client.paginate("repos/o/r/issues", {"per_page": 1})
        next(pages)
        next(pages)  # the same trap answers the followed link
    assert api.authorizations == ["Bearer t0ken", "Bearer t0ken"]
    assert [s["path"] for s in api.seen] == [
        "/api/v3/repos/o/r/issues?per_page=1",
        "/api/v3/repositories/42/issues?after=Y3Vy",
    ]


def test_a_redirect_to_another_origin_never_carries_the_token():
    with (
        http_trap.serve(body={"ok": True}) as elsewhere,
        http_trap.serve(status=302, headers={"location": f"{elsewhere.url}/x"}) as api,
        _real_client(api.url) as client,
    ):
        client.get_json("repos/o/r")
    assert api.authorizations == ["Bearer t0ken"]
    assert elsewhere.authorizations == [""]


@pytest.mark.parametrize(
    ("api", "link", "relative"),
    [
        ("http://127.0.0.1:5000", "http://127.0.0.1:5000/repos/o/r/issues?page=2", "repos/o/r/issues?page=2"),
        ("https://ghe.example/api/v3", "https://ghe.example/api/v3/repositories/1/issues?after=x", "repositories/1/issues?after=x"),
        ("https://ghe.example/api/v3", "https://ghe.example/repositories/1/issues", None),  # outside the prefix
        ("http://127.0.0.1:5000", "http://127.0.0.1:5001/repos/o/r/issues?page=2", None),  # another port
        ("https://api.github.com", "http://api.github.com/repos/o/r", None),  # another scheme
        ("https://api.github.com", "https://api.github.com.evil.example/repos/o/r", None),
        ("https://api.github.com", "https://user@api.github.com/repos/o/r", None),
        ("http://127.0.0.1:5000", "repos/o/r/issues?page=2", "repos/o/r/issues?page=2"),  # stored already
        ("http://127.0.0.1:5000", "//evil.example/repos/o/r", None),
    ],
)  # fmt: skip
def test_a_link_is_stored_relative_to_the_configured_api_or_not_at_all(api, link, relative):
    client = GitHubClient(api_url=api, env={})
    assert client.relative_url(link) == relative
    if relative is not None:
        assert client.relative_url(client.absolute_url(relative)) == relative


def test_a_request_nothing_answered_names_its_origin_for_the_doctor():
    """The second `make demo`'s deletions pass asked the previous fake GitHub's port; the
    stored error must say which address did not answer, so the doctor can name it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{s.getsockname()[1]}"  # closed when the block ends
    client = GitHubClient(api_url=gone, max_attempts=2, backoff=0, env={})
    with pytest.raises(GitHubError) as info:
        client.get_page("repos/acme/widgets/issues", params={"state": "all"})
    stored = f"deletions: {info.value}"  # as the runner prefixes its step
    assert unreachable_origin(stored) == gone
    assert unreachable_origin(stored[:-1]) == gone  # cut at 2,000 characters
    for other in (
        f"gave up after 6 attempts, last: HTTP 502 ({gone}/repos/acme/widgets/issues)",
        f"gave up after 6 attempts, last: ReadTimeout: timed out ({gone}/x)",
        "HTTP 422: Validation Failed (ConnectError (http://127.0.0.1:1/x))",
        None,
    ):
        assert unreachable_origin(other) is None, other
