"""The fake GitHub over real HTTP: pagination shapes, limits, conditional requests, faults."""

from __future__ import annotations

import base64
import contextlib
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fixtures import corpus, fake_github, recorded
from fixtures import fake_github_faults as faults

LINK = re.compile(r'<([^>]+)>; rel="(\w+)"')


def links(response: httpx.Response) -> dict[str, str]:
    return {rel: url for url, rel in LINK.findall(response.headers.get("link", ""))}


@pytest.fixture(scope="module")
def widgets() -> corpus.Corpus:
    return corpus.generate(seed=2, threads=40)


@contextlib.contextmanager
def running(corpora, **options):
    app = fake_github.create_app(corpora, **options)
    with fake_github.serve(app) as base, httpx.Client(base_url=base, timeout=5) as client:
        yield app, client


def walk(client: httpx.Client, url: str, params=None) -> tuple[list[dict], list[httpx.Response]]:
    items, responses = [], []
    while url:
        response = client.get(url, params=params)
        assert response.status_code == 200, response.text
        items += response.json()
        responses.append(response)
        url, params = links(response).get("next"), None
    return items, responses


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


def test_issue_list_link_is_not_a_cursor_on_repositories_id(widgets):
    with running([widgets]) as (_, client):
        first = client.get("/repos/acme/widgets/issues", params={"state": "all", "per_page": 10})
        nxt = links(first)["next"]
        assert set(links(first)) == {"next"}  # no rel="last", no prev on page 1
        assert re.match(
            rf"^{re.escape(str(client.base_url))}/repositories/{widgets.repo_id}/issues\?"
            r"state=all&per_page=10&after=[A-Za-z0-9%]+&page=2$",
            nxt,
        )
        cursor = parse_qs(urlsplit(nxt).query)["after"][0]
        assert base64.b64decode(cursor).startswith(b"cursor:")
        second = client.get(nxt)
        assert set(links(second)) == {"next", "prev"}
        prev = links(second)["prev"]
        assert "before=" in prev and prev.endswith("&page=1")
        assert [i["id"] for i in client.get(prev).json()] == [i["id"] for i in first.json()]


def test_following_links_verbatim_misses_or_repeats_issues(widgets):
    numbers = set(widgets.numbers())
    with running([widgets]) as (_, client):
        for params in (
            {"state": "all", "per_page": 7},
            {"state": "all", "per_page": 3, "sort": "updated", "direction": "asc"},
            {"state": "all", "per_page": 100, "sort": "comments"},
        ):
            items, pages = walk(client, "/repos/acme/widgets/issues", params)
            got = [i["number"] for i in items]
            assert sorted(got) == sorted(numbers), params
            assert len(pages) == -(-len(numbers) // params["per_page"])
        items, _ = walk(client, "/repos/acme/widgets/issues", {"sort": "updated"})
        assert {i["state"] for i in items} == {"open"}  # default state=open


def test_cursor_shifts_when_items_change_between_pages():
    c = corpus.generate(seed=5, threads=30)
    with running([c]) as (_, client):
        params = {"state": "all", "sort": "created", "direction": "asc", "per_page": 10}
        first = client.get("/repos/acme/widgets/issues", params=params)
        c.add_issue("arrived meanwhile")
        c.edit_issue(first.json()[-1]["number"], title="edited meanwhile")
        second = client.get(links(first)["next"])
        assert second.json()[0]["number"] == first.json()[-1]["number"] + 1


def test_large_page_number_without_cursor_is_not_422(widgets):
    with running([widgets]) as (_, client):
        response = client.get("/repos/acme/widgets/issues", params={"page": 101})
        assert response.status_code == 422
        assert response.json()["message"].startswith("Pagination with the page parameter")
        assert client.get("/repos/acme/widgets/issues", params={"page": 100}).status_code == 200


def test_small_listing_under_threshold_lacks_page_number_links(widgets):
    with running([widgets], cursor_threshold=10_000) as (_, client):
        response = client.get("/repos/acme/widgets/issues", params={"per_page": 5})
        assert set(links(response)) == {"next", "last"}
        assert links(response)["next"].endswith("per_page=5&page=2")


def test_comment_walk_goes_past_the_cap(widgets):
    total = len(widgets.table)
    with running([widgets], comment_cap=25) as (_, client):
        items, pages = walk(client, "/repos/acme/widgets/issues/comments", {"per_page": 10})
        assert len(items) == 25 < total and len(pages) == 3
        assert links(pages[0])["last"].endswith("page=3")
        beyond = client.get(
            "/repos/acme/widgets/issues/comments", params={"per_page": 10, "page": 4}
        )
        assert beyond.status_code == 200 and beyond.json() == []


def test_comment_links_unlike_recorded_page_number_links(widgets):
    rec = [
        ex
        for ex in recorded.replay("PaginatedList.testCustomPerPageIteration")
        if "link" in ex.response_headers
    ]
    rec_rels = [rel for _, rel in LINK.findall(rec[1].response_headers["link"])]
    with running([widgets]) as (_, client):
        page2 = client.get("/repos/acme/widgets/issues/comments", params={"per_page": 3, "page": 2})
        ours = LINK.findall(page2.headers["link"])
        assert [rel for _, rel in ours] == rec_rels == ["prev", "next", "last", "first"]
        assert ours[1][0].endswith(
            f"/repositories/{widgets.repo_id}/issues/comments?per_page=3&page=3"
        )


def test_comment_sort_since_and_per_issue_listing_wrong(widgets):
    all_comments = widgets.comments
    with running([widgets]) as (_, client):
        default, _ = walk(client, "/repos/acme/widgets/issues/comments", {"per_page": 100})
        assert [c["id"] for c in default] == [c["id"] for c in all_comments]  # created asc
        since = sorted(c["updated_at"] for c in all_comments)[len(all_comments) // 2]
        params = {"sort": "updated", "since": since, "per_page": 100}
        newer, _ = walk(client, "/repos/acme/widgets/issues/comments", params)
        assert newer and all(c["updated_at"] >= since for c in newer)
        assert [c["updated_at"] for c in newer] == sorted(
            (c["updated_at"] for c in newer), reverse=True
        )
        assert len(newer) == sum(c["updated_at"] >= since for c in all_comments)
        number = widgets.facts["long_threads"][0]
        thread, _ = walk(client, f"/repos/acme/widgets/issues/{number}/comments", {"per_page": 5})
        assert [c["id"] for c in thread] == [c["id"] for c in widgets.comments_for(number)]
        assert client.get(f"/repos/acme/widgets/issues/{number}").json() == widgets.issue(number)


def test_new_comment_invisible_to_next_since_poll():
    c = corpus.generate(seed=9, threads=15)
    with running([c]) as (_, client):
        mark = "2031-01-01T00:00:00Z"
        assert client.get("/repos/acme/widgets/issues", params={"since": mark}).json() == []
        added = c.add_comment(3, "new information", at="2031-01-01T00:00:05Z")
        issues = client.get("/repos/acme/widgets/issues", params={"since": mark, "state": "all"})
        assert [i["number"] for i in issues.json()] == [3]
        comments = client.get("/repos/acme/widgets/issues/comments", params={"since": mark})
        assert [x["id"] for x in comments.json()] == [added["id"]]


def test_etag_304_spends_rate_limit_or_every_answer_lacks_headers(widgets):
    with running([widgets], rate_limit=50) as (_, client):
        first = client.get("/repos/acme/widgets")
        assert first.json()["full_name"] == "acme/widgets"
        for name in ("limit", "remaining", "reset", "used", "resource"):
            assert f"x-ratelimit-{name}" in first.headers
        assert first.headers["x-ratelimit-remaining"] == "49"
        again = client.get("/repos/acme/widgets", headers={"if-none-match": first.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["x-ratelimit-remaining"] == "49"
        third = client.get("/repos/acme/widgets/issues")
        assert third.headers["x-ratelimit-remaining"] == "48"
        assert third.headers["x-ratelimit-used"] == "2"


def test_spent_limit_not_refused_until_reset():
    clock = Clock()
    with running([corpus.generate(threads=5)], rate_limit=2, clock=clock) as (app, client):
        client.get("/repos/acme/widgets")
        client.get("/repos/acme/widgets")
        refused = client.get("/repos/acme/widgets")
        assert refused.status_code == 403 and refused.headers["x-ratelimit-remaining"] == "0"
        assert "rate limit" in refused.json()["message"]
        clock.now = int(refused.headers["x-ratelimit-reset"]) + 1
        assert client.get("/repos/acme/widgets").status_code == 200
        assert app.state.rate.remaining == 1


def test_injected_faults_not_served_as_configured():
    clock = Clock()
    rules = [faults.fail(503, path=r"/issues$", times=1)]
    with running([corpus.generate(threads=12)], faults=rules, clock=clock) as (app, client):
        assert client.get("/repos/acme/widgets/issues").status_code == 503
        assert client.get("/repos/acme/widgets/issues").status_code == 200
        app.state.faults.append(faults.secondary_limit(retry_after=7))
        limited = client.get("/repos/acme/widgets")
        assert limited.status_code == 403 and limited.headers["retry-after"] == "7"
        assert "secondary rate limit" in limited.json()["message"]
        app.state.faults.append(faults.primary_limit(status=429, reset_in=2))
        primary = client.get("/repos/acme/widgets")
        assert primary.status_code == 429 and primary.headers["x-ratelimit-remaining"] == "0"
        assert int(primary.headers["x-ratelimit-reset"]) == int(clock.now) + 2
        assert client.get("/repos/acme/widgets").status_code == 429
        clock.now += 3
        assert client.get("/repos/acme/widgets").status_code == 200
        app.state.faults.append(faults.drop(path="/issues/comments"))
        with pytest.raises(httpx.RemoteProtocolError):
            client.get("/repos/acme/widgets/issues/comments", params={"per_page": 50})
        assert client.get("/repos/acme/widgets/issues/comments").status_code == 200
        app.state.faults.append(faults.per_page_over(50, path="/issues/comments"))
        for _ in range(2):
            bad = client.get("/repos/acme/widgets/issues/comments", params={"per_page": 51})
            assert bad.status_code == 502
        ok = client.get("/repos/acme/widgets/issues/comments", params={"per_page": 50})
        assert ok.status_code == 200


def test_requests_not_recorded_for_assertions(widgets):
    with running([widgets]) as (app, client):
        client.get("/repos/acme/widgets/issues", params={"state": "all"}, headers={"x-probe": "1"})
        client.get("/repos/nobody/nothing")
        first, second = app.state.requests
        assert (first.method, first.path, first.params) == (
            "GET",
            "/repos/acme/widgets/issues",
            {"state": "all"},
        )
        assert first.headers["x-probe"] == "1" and first.status == 200
        assert second.status == 404


def test_unknown_repo_not_answered_with_github_404_json(widgets):
    with running([widgets]) as (_, client):
        response = client.get("/repos/nobody/nothing/issues")
        assert response.status_code == 404
        assert response.json()["message"] == "Not Found"
        assert "documentation_url" in response.json()
        assert client.get("/repositories/1/issues").status_code == 404


def test_recorded_corpus_not_served_verbatim():
    rec = corpus.load_recorded("github-to-sqlite")
    with running([rec]) as (_, client):
        repo = client.get("/repos/dogsheep/github-to-sqlite").json()
        assert repo == recorded.load_json("github-to-sqlite", "tests", "repo.json")
        issues = client.get(
            "/repos/dogsheep/github-to-sqlite/issues", params={"state": "all", "direction": "asc"}
        ).json()
        assert issues == recorded.load_json("github-to-sqlite", "tests", "issues.json")[::-1]


def test_script_does_not_print_its_url_or_serve():
    script = Path(fake_github.__file__)
    proc = subprocess.Popen(
        [
            sys.executable,
            str(script),
            "--threads",
            "5",
            "--port",
            "0",
            "--replay",
            "github-to-sqlite",
            "--repo",
            "acme/widgets",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )
    try:
        line = proc.stdout.readline()
        match = re.match(r"listening on (http://127\.0\.0\.1:\d+)$", line.strip())
        assert match, line + proc.stderr.read() if proc.poll() is not None else line
        for _ in range(100):
            with contextlib.suppress(httpx.ConnectError):
                response = httpx.get(match.group(1) + "/repos/dogsheep/github-to-sqlite")
                break
        assert response.json()["id"] == 207052882
        assert httpx.get(match.group(1) + "/repos/acme/widgets").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
