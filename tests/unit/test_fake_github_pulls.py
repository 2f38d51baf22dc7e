"""The fake GitHub's pull-request, review, permission and GraphQL endpoints over real HTTP."""

from __future__ import annotations

import contextlib
import json
import re

import httpx
import pytest
from fixtures import corpus, fake_github, recorded
from fixtures import fake_github_faults as faults
from fixtures.corpus_pull_payloads import FULL_ONLY

LINK = re.compile(r'<([^>]+)>; rel="(\w+)"')
SHA = re.compile(r"^[0-9a-f]{40}$")
EXAMPLES = ("rest-api-description-2020", "examples")


def links(response: httpx.Response) -> dict[str, str]:
    return {rel: url for url, rel in LINK.findall(response.headers.get("link", ""))}


@contextlib.contextmanager
def running(corpora, **options):
    app = fake_github.create_app(corpora, **options)
    with fake_github.serve(app) as base, httpx.Client(base_url=base, timeout=10) as client:
        yield app, client


def walk(client: httpx.Client, url: str, params=None) -> tuple[list, list[httpx.Response]]:
    items, responses = [], []
    while url:
        response = client.get(url, params=params)
        assert response.status_code == 200, response.text
        items += response.json()
        responses.append(response)
        url, params = links(response).get("next"), None
    return items, responses


@pytest.fixture(scope="module")
def repo() -> corpus.Corpus:
    return corpus.generate(seed=4, threads=150)


@pytest.fixture(scope="module")
def server(repo):
    with running([repo]) as (app, client):
        yield app, client


@pytest.fixture(scope="module")
def client(server) -> httpx.Client:
    return server[1]


def reviewed_pr(c: corpus.Corpus) -> int:
    """A PR with review comments, replies and several reviews."""
    replies = {c.review_table.numbers[c.review_table.index(i)] for i in c.facts["review_reply_ids"]}
    return max(sorted(replies), key=lambda n: (len(c.reviews.get(n, [])), -n))


def test_pull_object_lacks_recorded_keys_or_disagrees_with_its_issue(repo, client):
    recorded_full = recorded.load_json(*EXAMPLES, "pull-request.json")
    webhook = recorded.webhook("pull_request", "closed")["pull_request"]
    number = reviewed_pr(repo)
    pull = client.get(f"/repos/acme/widgets/pulls/{number}").json()
    issue = client.get(f"/repos/acme/widgets/issues/{number}").json()
    assert set(pull) >= set(recorded_full) | set(webhook)
    for side in ("head", "base"):
        assert set(pull[side]) >= set(webhook[side])
        assert SHA.match(pull[side]["sha"])
    assert set(pull["_links"]) >= set(webhook["_links"])
    assert set(pull["base"]["repo"]) >= set(webhook["base"]["repo"]) - {"custom_properties"}
    assert SHA.match(pull["merge_commit_sha"])
    assert pull["id"] != issue["id"] and pull["node_id"] == issue["node_id"]
    assert issue["pull_request"]["url"].endswith(f"/pulls/{number}")
    assert pull["merged_at"] == issue["pull_request"]["merged_at"]
    assert pull["merged"] == (pull["merged_at"] is not None)
    for key in ("title", "body", "state", "user", "labels", "created_at", "updated_at", "draft"):
        assert pull[key] == issue[key], key
    assert pull["comments"] == issue["comments"]
    comments, _ = walk(client, f"/repos/acme/widgets/pulls/{number}/comments")
    assert pull["review_comments"] == len(comments) > 0
    files, _ = walk(client, f"/repos/acme/widgets/pulls/{number}/files")
    assert pull["changed_files"] == len(files)
    assert pull["additions"] == sum(f["additions"] for f in files)
    assert pull["deletions"] == sum(f["deletions"] for f in files)
    assert client.get("/repos/acme/widgets/pulls/1").status_code in (200, 404)
    issue_only = next(n for n in repo.numbers() if n not in repo.pulls)
    assert client.get(f"/repos/acme/widgets/pulls/{issue_only}").status_code == 404


def test_pull_list_is_not_the_simple_shape_or_misses_pulls(repo, client):
    recorded_items = recorded.load_json(*EXAMPLES, "pull-request-simple-items.json")
    items, pages = walk(client, "/repos/acme/widgets/pulls", {"state": "all", "per_page": 25})
    assert sorted(i["number"] for i in items) == repo.facts["pr_numbers"]
    assert set(links(pages[0])) == {"next", "last"}
    assert set(items[0]) >= set(recorded_items[0]) and not set(items[0]) & set(FULL_ONLY)
    created = [i["created_at"] for i in items]
    assert created == sorted(created, reverse=True)  # default: created, desc
    opened, _ = walk(client, "/repos/acme/widgets/pulls", {"per_page": 100})
    assert {i["state"] for i in opened} == {"open"}
    popular, _ = walk(
        client, "/repos/acme/widgets/pulls", {"state": "all", "sort": "popularity", "per_page": 100}
    )

    def weight(item: dict) -> int:
        n = item["number"]
        return repo.thread(n).comment_count + len(repo.review_indices_for(n))

    assert [weight(i) for i in popular] == sorted(weight(i) for i in popular)  # asc by default
    bad = client.get("/repos/acme/widgets/pulls", params={"sort": "comments"})
    assert bad.status_code == 422


def test_changed_files_not_real_stdlib_diffs(repo, client):
    recorded_files = recorded.load_json(*EXAMPLES, "diff-entry-items.json")
    statuses = set()
    few = [n for n in repo.facts["pr_numbers"] if n not in repo.facts["many_files_prs"]][:25]
    for number in few:
        for f in client.get(f"/repos/acme/widgets/pulls/{number}/files").json():
            statuses.add(f["status"])
            assert set(f) >= set(recorded_files[0]) - {"patch"}
            assert f["changes"] == f["additions"] + f["deletions"]
            if f["status"] == "renamed":
                assert f["previous_filename"] != f["filename"]
            if "patch" not in f:
                continue
            lines = f["patch"].split("\n")
            assert re.match(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@", lines[0])
            assert sum(x.startswith("+") for x in lines[1:]) == f["additions"]
            assert sum(x.startswith("-") for x in lines[1:]) == f["deletions"]
    assert {"modified", "added"} <= statuses


def test_file_listing_serves_more_than_githubs_3000_files():
    big = corpus.generate(seed=1, threads=40, huge_pr_files=3100)
    fact = big.facts["many_files_pr"]
    assert fact["changed_files"] == 3100 and fact["listed"] == 3000
    url = f"/repos/acme/widgets/pulls/{fact['number']}/files"
    with running([big]) as (_, client):
        files, pages = walk(client, url, {"per_page": 100})
        assert len(files) == 3000 and len(pages) == 30
        assert len({f["filename"] for f in files}) == 3000
        assert links(pages[0])["last"].endswith("per_page=100&page=30")
        assert client.get(url, params={"per_page": 100, "page": 31}).json() == []
        pull = client.get(f"/repos/acme/widgets/pulls/{fact['number']}").json()
        assert pull["changed_files"] == 3100
        assert pull["title"] == big.issue(fact["number"])["title"]


def test_review_comment_shape_or_diff_hunk_wrong(repo, client):
    rec_items = recorded.load_json(*EXAMPLES, "pull-request-review-comment-items.json")
    webhook = recorded.webhook("pull_request_review_comment", "created")["comment"]
    items, _ = walk(client, "/repos/acme/widgets/pulls/comments", {"per_page": 50})
    assert [i["id"] for i in items] == [c["id"] for c in repo.review_comments]
    keys = set().union(*(set(i) for i in items))
    assert keys >= set(rec_items[0]) | set(webhook)
    assert set(items[0]) >= set(webhook)
    by_id = {i["id"]: i for i in items}
    for item in items:
        assert item["diff_hunk"].startswith("@@ -")
        assert SHA.match(item["commit_id"]) and SHA.match(item["original_commit_id"])
        assert item["subject_type"] == "line" and item["side"] in ("LEFT", "RIGHT")
        if item["position"] is None:
            assert item["line"] is None and item["original_line"]
        else:
            assert item["diff_hunk"].count("\n") == item["position"]
        if "in_reply_to_id" in item:
            root = by_id[item["in_reply_to_id"]]
            assert "in_reply_to_id" not in root
            assert (root["path"], root["diff_hunk"]) == (item["path"], item["diff_hunk"])
    number = reviewed_pr(repo)
    reviews = client.get(f"/repos/acme/widgets/pulls/{number}/reviews").json()
    own = [i for i in items if i["pull_request_url"].endswith(f"/pulls/{number}")]
    assert {i["pull_request_review_id"] for i in own} <= {r["id"] for r in reviews}
    files, _ = walk(client, f"/repos/acme/widgets/pulls/{number}/files", {"per_page": 100})
    assert {i["path"] for i in own} <= {f["filename"] for f in files}


def test_review_comment_sort_and_since_ignored(repo, client):
    everything = repo.review_comments
    since = sorted(c["updated_at"] for c in everything)[len(everything) // 2]
    params = {"sort": "updated", "direction": "asc", "since": since, "per_page": 50}
    newer, _ = walk(client, "/repos/acme/widgets/pulls/comments", params)
    assert len(newer) == sum(c["updated_at"] >= since for c in everything)
    stamps = [c["updated_at"] for c in newer]
    assert stamps == sorted(stamps)


def test_heavy_review_comment_pages_do_not_time_out_like_github(repo, client):
    first = client.get("/repos/acme/widgets/pulls/comments", params={"per_page": 100})
    second = client.get("/repos/acme/widgets/pulls/comments", params={"per_page": 51})
    assert {first.status_code, second.status_code} == {502, 504}
    assert first.headers["content-type"].startswith("text/html")
    assert "x-ratelimit-remaining" in first.headers
    ok = client.get("/repos/acme/widgets/pulls/comments", params={"per_page": 50})
    assert ok.status_code == 200 and len(ok.json()) == 50
    number = reviewed_pr(repo)
    per_pr = client.get(f"/repos/acme/widgets/pulls/{number}/comments", params={"per_page": 100})
    assert per_pr.status_code == 200
    with running([repo], review_comments_max_per_page=None) as (_, relaxed):
        heavy = relaxed.get("/repos/acme/widgets/pulls/comments", params={"per_page": 100})
        assert heavy.status_code == 200 and len(heavy.json()) == 100


def test_reviews_listing_shape_or_ghost_author_wrong(repo, client):
    rec = recorded.load_json(*EXAMPLES, "pull-request-review-items.json")
    webhook = recorded.webhook("pull_request_review", "submitted")["review"]
    number = reviewed_pr(repo)
    reviews = client.get(f"/repos/acme/widgets/pulls/{number}/reviews").json()
    assert set(reviews[0]) >= set(rec[0]) | set(webhook)
    assert {r["state"] for r in reviews} <= {"APPROVED", "CHANGES_REQUESTED", "COMMENTED"}
    stamps = [r["submitted_at"] for r in reviews]
    assert stamps == sorted(stamps)
    ghost = repo.facts["ghost_review"]
    listed = client.get(f"/repos/acme/widgets/pulls/{ghost['number']}/reviews").json()
    assert next(r for r in listed if r["id"] == ghost["review_id"])["user"] is None


REVIEWS_QUERY = """query($owner: String!, $name: String!, $c0: String, $c1: String) {
  repository(owner: $owner, name: $name) {
    pr%d: pullRequest(number: %d) { number reviews(first: 2, after: $c0) {
      pageInfo { hasNextPage endCursor }
      nodes { databaseId id author { login __typename } authorAssociation body state
              submittedAt createdAt updatedAt url commit { oid } } } }
    pr%d: pullRequest(number: %d) { number reviews(first: 100, after: $c1) {
      pageInfo { hasNextPage endCursor } nodes { databaseId author { login __typename } } } }
    pr%d: pullRequest(number: %d) { number reviews(first: 100, after: null) {
      pageInfo { hasNextPage endCursor } nodes { databaseId } } }
    pr999999: pullRequest(number: 999999) { number reviews(first: 100) {
      pageInfo { hasNextPage endCursor } nodes { databaseId } } }
  }
  rateLimit { cost remaining resetAt }
}"""


def test_graphql_batch_misses_reviews_or_not_found_errors(repo, client):
    _, rec_headers, rec_body = recorded.wiremock_graphql("pMY5k")
    number = reviewed_pr(repo)
    bump = next(n for n in repo.facts["bot_pr_numbers"] if repo.reviews.get(n))
    issue_only = next(n for n in repo.numbers() if n not in repo.pulls)
    query = REVIEWS_QUERY % (number, number, bump, bump, issue_only, issue_only)
    variables = {"owner": "acme", "name": "widgets", "c0": None, "c1": None}
    seen, pages = [], 0
    while True:
        response = client.post("/graphql", json={"query": query, "variables": variables})
        assert response.status_code == 200
        assert set(response.headers) >= {k for k in rec_headers if k.startswith("x-ratelimit")}
        assert response.headers["x-ratelimit-resource"] == rec_headers["x-ratelimit-resource"]
        media = rec_headers["x-github-media-type"].split(";")[0]
        assert response.headers["x-github-media-type"].startswith(media)
        assert "etag" not in response.headers
        body = response.json()
        data = body["data"]["repository"]
        assert data[f"pr{issue_only}"] is None and data["pr999999"] is None
        missing = {tuple(e["path"]) for e in body["errors"] if e["type"] == "NOT_FOUND"}
        assert missing == {("repository", f"pr{issue_only}"), ("repository", "pr999999")}
        assert all(e["locations"][0]["line"] > 1 for e in body["errors"])
        reviews = data[f"pr{number}"]["reviews"]
        assert set(reviews["pageInfo"]) <= set(rec_body["data"]["search"]["pageInfo"])
        seen += reviews["nodes"]
        pages += 1
        if not reviews["pageInfo"]["hasNextPage"]:
            break
        variables["c0"] = reviews["pageInfo"]["endCursor"]
    rest = client.get(f"/repos/acme/widgets/pulls/{number}/reviews").json()
    assert [n["databaseId"] for n in seen] == [r["id"] for r in rest]
    assert pages == -(-len(rest) // 2) and pages > 1
    first = seen[0]
    assert first["url"] == rest[0]["html_url"] and first["commit"]["oid"] == rest[0]["commit_id"]
    assert first["id"] == rest[0]["node_id"] and first["state"] == rest[0]["state"]
    bot_nodes = data[f"pr{bump}"]["reviews"]["nodes"]
    assert bot_nodes and data[f"pr{bump}"]["number"] == bump
    assert body["data"]["rateLimit"]["cost"] == 1
    also = client.post("/api/graphql", json={"query": query, "variables": variables})
    assert also.status_code == 200


def test_graphql_bot_login_or_limits_not_like_github():
    c = corpus.generate(seed=4, threads=150)
    lint = c.review_table.numbers[c.review_table.index(c.facts["bot_review_comment_ids"][0])]
    query = (
        'query { repository(owner: "acme", name: "widgets") { '
        f"pr: pullRequest(number: {lint}) {{ reviews(first: 100) {{ "
        "nodes { author { login __typename } } } } } }"
    )
    with running([c], graphql_limit=2) as (app, client):
        nodes = client.post("/graphql", json={"query": query}).json()["data"]["repository"]
        authors = [n["author"] for n in nodes["pr"]["reviews"]["nodes"]]
        assert {"login": "github-actions", "__typename": "Bot"} in authors
        too_many = query.replace("first: 100", "first: 101")
        refused = client.post("/graphql", json={"query": too_many}).json()
        assert (
            refused["data"] is None
            and "exceeds the `first` limit" in refused["errors"][0]["message"]
        )
        spent = client.post("/graphql", json={"query": query})
        assert spent.status_code == 200 and spent.headers["x-ratelimit-remaining"] == "0"
        assert spent.json()["errors"][0]["type"] == "RATE_LIMITED"
        assert client.get("/repos/acme/widgets").status_code == 200  # core is its own bucket
        unknown = query.replace('"widgets"', '"nothing"')
        app.state.graphql_rate.remaining = 10
        gone = client.post("/graphql", json={"query": unknown}).json()
        assert gone["data"]["repository"] is None and gone["errors"][0]["type"] == "NOT_FOUND"
        assert app.state.requests[-1].method == "POST" and b"nothing" in app.state.requests[-1].body


def test_permission_endpoint_not_githubs_shape(repo, client):
    rec = recorded.cassette(
        "Octokit_Client_Repositories",
        "with_repository",
        "_permission_level",
        "returns_the_permission_level_a_user_has_on_a_repository.json",
    )[1].json()
    roles = repo.facts["permissions"]
    owner = next(login for login, a in repo.facts["associations"].items() if a == "OWNER")
    answer = client.get(f"/repos/acme/widgets/collaborators/{owner}/permission")
    assert answer.status_code == 200 and set(answer.json()) >= set(rec) | {"role_name"}
    assert answer.json()["permission"] == "admin" and answer.json()["user"]["login"] == owner
    assert set(answer.json()["user"]) >= set(rec["user"]) - {"site_admin"} | {"permissions"}
    members = [login for login, a in repo.facts["associations"].items() if a == "MEMBER"]
    levels = {
        client.get(f"/repos/acme/widgets/collaborators/{m}/permission").json()["permission"]
        for m in members
    }
    assert {"write", "read"} <= levels  # MEMBER does not imply write access
    assert {roles[m] for m in members} >= {"write", "read"}
    upper = client.get(f"/repos/acme/widgets/collaborators/{owner.upper()}/permission")
    assert upper.status_code == 200
    missing = client.get("/repos/acme/widgets/collaborators/no-such-user/permission")
    assert missing.status_code == 404


def test_permission_change_not_served():
    c = corpus.generate(seed=2, threads=20)
    with running([c]) as (_, client):
        c.set_permission("newcomer", "triage")
        answer = client.get("/repos/acme/widgets/collaborators/newcomer/permission").json()
        assert (answer["permission"], answer["role_name"]) == ("read", "triage")
        assert answer["user"]["permissions"]["triage"] and not answer["user"]["permissions"]["push"]


def test_deleted_or_transferred_issue_still_served():
    c = corpus.generate(seed=6, threads=30)
    other = corpus.generate(seed=6, threads=5, repo="acme/gadgets")
    issues = [n for n in c.numbers() if n not in c.pulls and c.thread(n).comment_count]
    deleted, moved = issues[0], issues[1]
    moved_comments = [x["body"] for x in c.comments_for(moved)]
    with running([c, other]) as (_, client):
        c.delete_issue(deleted)
        gone = client.get(f"/repos/acme/widgets/issues/{deleted}")
        assert gone.status_code == 410 and gone.json()["message"] == "This issue was deleted"
        assert client.get(f"/repos/acme/widgets/issues/{deleted}/comments").status_code == 410
        every, _ = walk(client, "/repos/acme/widgets/issues/comments", {"per_page": 100})
        assert all(not x["issue_url"].endswith(f"/issues/{deleted}") for x in every)
        new = c.transfer_issue(moved, other)
        answer = client.get(f"/repos/acme/widgets/issues/{moved}")
        assert answer.status_code == 301
        location = answer.headers["location"]
        assert location.endswith(f"/repositories/{other.repo_id}/issues/{new['number']}")
        assert answer.json()["url"] == location
        there = client.get(location)
        assert there.status_code == 200 and there.json()["title"] == new["title"]
        comments = client.get(f"/repos/acme/widgets/issues/{moved}/comments")
        assert comments.status_code == 301 and comments.headers["location"].endswith("/comments")
        moved_there = client.get(comments.headers["location"]).json()
        assert [x["body"] for x in moved_there] == moved_comments
        listed, _ = walk(client, "/repos/acme/widgets/issues", {"state": "all", "per_page": 100})
        assert {deleted, moved}.isdisjoint(i["number"] for i in listed)
    with pytest.raises(ValueError):
        c.delete_issue(c.facts["pr_numbers"][0])


def test_page_past_100_not_refused_on_every_page_numbered_listing(repo, client):
    number = reviewed_pr(repo)
    for url in (
        "/repos/acme/widgets/issues/comments",
        f"/repos/acme/widgets/issues/{repo.facts['long_threads'][0]}/comments",
        "/repos/acme/widgets/pulls",
        "/repos/acme/widgets/pulls/comments",
        f"/repos/acme/widgets/pulls/{number}/comments",
        f"/repos/acme/widgets/pulls/{number}/files",
        f"/repos/acme/widgets/pulls/{number}/reviews",
    ):
        refused = client.get(url, params={"page": 101, "state": "all"})
        assert refused.status_code == 422, url
        assert refused.json()["message"].startswith("Pagination with the page parameter")
        assert client.get(url, params={"page": 100, "state": "all"}).json() == [], url


def test_faults_not_applied_to_new_endpoints(repo):
    number = reviewed_pr(repo)
    files = f"/repos/acme/widgets/pulls/{number}/files"
    rules = [
        faults.fail(502, path=rf"/pulls/{number}/files$", times=None, when=lambda q: "page" in q),
        faults.not_json(path=r"/pulls$"),
        faults.truncate(path=rf"/pulls/{number}$"),
        faults.drop(path=r"/pulls/comments$"),
        faults.secondary_limit(path=r"/graphql$", retry_after=3),
    ]
    with running([repo], faults=rules) as (_, client):
        for _ in range(5):  # a page that can never be served
            assert client.get(files, params={"page": 2}).status_code == 502
        assert client.get(files).status_code == 200
        html = client.get("/repos/acme/widgets/pulls")
        assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
        with pytest.raises(json.JSONDecodeError):
            html.json()
        cut = client.get(f"/repos/acme/widgets/pulls/{number}")
        assert cut.status_code == 200 and len(cut.content) == int(cut.headers["content-length"])
        with pytest.raises(json.JSONDecodeError):
            cut.json()
        assert client.get(f"/repos/acme/widgets/pulls/{number}").json()["number"] == number
        with pytest.raises(httpx.RemoteProtocolError):
            client.get("/repos/acme/widgets/pulls/comments")
        limited = client.post("/graphql", json={"query": "query { rateLimit { cost } }"})
        assert limited.status_code == 403 and limited.headers["retry-after"] == "3"


def test_nul_surrogate_or_huge_comment_not_sent_like_github():
    c = corpus.generate(seed=3, threads=30, hostile_text=True, huge_comment_bytes=10_000_000)
    hostile, huge = c.facts["hostile_comment"], c.facts["huge_comment"]
    with running([c]) as (_, client):
        url = f"/repos/acme/widgets/issues/{hostile['number']}/comments"
        answer = client.get(url, params={"per_page": 100})
        assert b"\\u0000" in answer.content and b"\\ud800" in answer.content
        answer.content.decode("utf-8")  # valid UTF-8: the surrogate is escaped, not encoded
        body = next(x for x in answer.json() if x["id"] == hostile["comment_id"])["body"]
        assert "\x00" in body and "\ud800" in body
        big = client.get(
            f"/repos/acme/widgets/issues/{huge['number']}/comments", params={"per_page": 100}
        )
        item = next(x for x in big.json() if x["id"] == huge["comment_id"])
        assert len(item["body"]) >= 10_000_000


def test_conditional_requests_spend_limit_on_new_endpoints(repo):
    number = reviewed_pr(repo)
    with running([repo]) as (_, client):
        for url in (
            f"/repos/acme/widgets/pulls/{number}",
            f"/repos/acme/widgets/pulls/{number}/files",
        ):
            first = client.get(url)
            again = client.get(url, headers={"if-none-match": first.headers["etag"]})
            assert again.status_code == 304
            assert again.headers["x-ratelimit-remaining"] == first.headers["x-ratelimit-remaining"]


def test_review_comment_edits_not_served():
    c = corpus.generate(seed=8, threads=40)
    number = c.facts["pr_numbers"][2]
    with running([c]) as (_, client):
        before = client.get(f"/repos/acme/widgets/pulls/{number}").json()
        added = c.add_review_comment(
            number, "Please rename this.", login="newcomer", at="2031-01-01T00:00:00Z"
        )
        reply = c.add_review_comment(number, "Renamed.", in_reply_to=added["id"])
        assert reply["in_reply_to_id"] == added["id"] and "in_reply_to_id" not in added
        pull = client.get(f"/repos/acme/widgets/pulls/{number}").json()
        assert pull["review_comments"] == before["review_comments"] + 2
        assert pull["updated_at"] > before["updated_at"]
        since = {"since": "2031-01-01T00:00:00Z", "per_page": 50}
        fresh = client.get("/repos/acme/widgets/pulls/comments", params=since).json()
        assert [x["id"] for x in fresh] == [added["id"], reply["id"]]
        reviews = client.get(f"/repos/acme/widgets/pulls/{number}/reviews").json()
        assert reviews[-1]["id"] == reply["pull_request_review_id"]
        assert reviews[-1]["state"] == "COMMENTED" and reviews[-1]["body"] == ""
        c.delete_review_comment(added["id"])
        after = client.get(f"/repos/acme/widgets/pulls/{number}/comments").json()
        assert added["id"] not in {x["id"] for x in after} and reply["id"] in {
            x["id"] for x in after
        }
