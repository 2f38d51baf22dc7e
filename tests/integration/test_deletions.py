"""A comment deleted on GitHub stops being served after the next poll and build.

GitHub drops a deleted comment from every listing and lowers its thread's count, but leaves
the thread's ``updated_at`` alone (the fake does the same by default), so no ``since`` walk
sees it: the poll's rotating count check and the sweep must.
"""

from __future__ import annotations

import io
import json

import psycopg
import pytest
from fixtures import corpus
from fixtures import world as worlds

from relore.contract.version import __version__
from relore.operate import cli as relored
from relore.operate import database
from relore.serve.app import Settings, create_app

REPO = "acme/forgets"
SECRET_WORD = "quixotrelic"
REVIEW_WORD = "zymurgical"


def _extract(url: str, api_url: str, *argv: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_DATABASE_URL": url, "RELORE_GITHUB_API_URL": api_url, "GITHUB_TOKEN": "t"}
    code = relored.main(["extract", *argv, "--repo", REPO, "--json"], env=env, out=out, err=err)
    assert code == 0, err.getvalue()
    report = json.loads(out.getvalue())
    assert report["outcome"] == "done", report
    return report


def _versions(url: str, object_type: str, object_id: int) -> list[bool]:
    """is_deleted of every raw version of one object of this repository, oldest first (the
    world's other corpora reuse object ids)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "select is_deleted from raw.github_objects where object_type = %s "
            "and object_id = %s and repo = %s order by row_id",
            (object_type, object_id, REPO),
        ).fetchall()
    return [r[0] for r in rows]


def _marts_holding(url: str, word: str) -> list[str]:
    """Every marts table.column whose text (cast) holds the word or its stemmed lexeme."""
    hits = []
    with psycopg.connect(url) as conn:
        (stem,) = conn.execute(
            "select (tsvector_to_array(to_tsvector('english', %s)))[1]", (word,)
        ).fetchone()
        columns = conn.execute(
            """
            select c.table_name, c.column_name
            from information_schema.columns as c
            join information_schema.tables as t
                on t.table_schema = c.table_schema and t.table_name = c.table_name
            where c.table_schema = 'marts' and t.table_type = 'BASE TABLE'
                and c.data_type in ('text', 'tsvector', 'jsonb', 'ARRAY', 'character varying')
            """
        ).fetchall()
        for table, column in columns:
            found = conn.execute(
                f'select 1 from marts."{table}" where "{column}"::text ilike any(%s) limit 1',
                ([f"%{word}%", f"%{stem}%"],),
            ).fetchone()
            if found:
                hits.append(f"{table}.{column}")
    return hits


def _corpus() -> corpus.Corpus:
    w = corpus.generate(seed=21, threads=30, repo=REPO)
    issue = next(i["number"] for i in w.issues if "pull_request" not in i and i["comments"])
    pr = next(n for n in w.pull_numbers() if w.review_comments_for(n))
    w.planted = {
        "issue": issue,
        "comment": w.add_comment(issue, f"my token is {SECRET_WORD}, oops")["id"],
        "pr": pr,
        "review_comment": w.add_review_comment(pr, f"nit: {REVIEW_WORD} here")["id"],
    }
    return w


# Only this module extracts acme/forgets: its tests delete from the fake GitHub the world
# landed it from (served all session), and poll and build a copy of the world.
WORLD_PART = worlds.Part(REPO, corpus=_corpus)


@pytest.fixture(scope="module")
def world(indexed_world):
    return indexed_world.corpora[REPO]


@pytest.fixture(scope="module")
def github(indexed_world):
    return indexed_world.github[REPO]


@pytest.fixture(scope="module")
def indexed(world_copy, tmp_path_factory):
    return {"url": world_copy, "build": tmp_path_factory.mktemp("dbt")}


def _search(url: str, word: str) -> list[dict]:
    from starlette.testclient import TestClient

    with TestClient(
        create_app(Settings(database.reader_url(url, env={}))), base_url="http://127.0.0.1"
    ) as client:
        response = client.get(
            "/api/v1/search",
            params={"q": word, "repo": REPO},
            headers={"x-relore-client": __version__},
        )
    assert response.status_code == 200, response.text
    return response.json()["hits"]


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_a_deleted_comment_is_served_until_noticed_then_gone_from_every_mart(
    indexed, github, world, run_dbt
):
    app, base_url = github
    url = indexed["url"]
    assert _search(url, SECRET_WORD), "the planted comment was never searchable"
    with app.state.lock:
        world.delete_comment(world.planted["comment"])  # the thread's updated_at stays

    before = len(app.state.requests)
    poll = _extract(url, base_url)
    spent = [r for r in app.state.requests[before:] if r.status != 304]
    step = next(s for s in poll["steps"] if s["step"] == "deletions")
    assert "1 thread(s) re-read" in step["detail"], step
    assert _versions(url, "issue_comment", world.planted["comment"]) == [False, True]
    # the rotation's page, then the thread whole: its head and its comments
    number = world.planted["issue"]
    assert [r.path for r in spent][-3:] == [
        f"/repos/{REPO}/issues",
        f"/repos/{REPO}/issues/{number}",
        f"/repos/{REPO}/issues/{number}/comments",
    ]

    run_dbt(url, indexed["build"], "build")
    assert _marts_holding(url, SECRET_WORD) == []
    assert _search(url, SECRET_WORD) == []

    again = _extract(url, base_url)
    assert [s["written"] for s in again["steps"]] == [0] * len(again["steps"])
    assert _versions(url, "issue_comment", world.planted["comment"]) == [False, True]


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_a_deleted_review_comment_is_noticed_by_the_sweep_then_gone(
    indexed, github, world, run_dbt
):
    app, base_url = github
    url = indexed["url"]
    assert _search(url, REVIEW_WORD)
    with app.state.lock:
        world.delete_review_comment(world.planted["review_comment"])
    # the PR's updated_at did not move: a poll has nothing to go on for a review comment
    sweep = _extract(url, base_url, "sweep")
    assert "1 thread(s) re-read" in sweep["steps"][0]["detail"], sweep
    assert _versions(url, "review_comment", world.planted["review_comment"]) == [False, True]
    run_dbt(url, indexed["build"], "build")
    assert _marts_holding(url, REVIEW_WORD) == []
    assert _search(url, REVIEW_WORD) == []
    assert _extract(url, base_url, "sweep")["steps"][0]["written"] == 0


def test_a_server_that_touches_the_thread_on_deletion_is_caught_by_the_poll(
    indexed, github, world, run_dbt
):
    app, base_url = github
    url = indexed["url"]
    victim = next(c for c in world.comments_for(world.planted["issue"]))["id"]
    with app.state.lock:
        world.delete_comment(victim, touch_issue=True)
    _extract(url, base_url)
    assert _versions(url, "issue_comment", victim)[-1] is True
    assert _versions(url, "issue_comment", victim).count(True) == 1


def test_status_says_when_deletions_were_last_checked(indexed):
    from starlette.testclient import TestClient

    reader = database.reader_url(indexed["url"], env={})
    with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
        page = client.get(
            "/api/v1/status", params={"repo": REPO}, headers={"x-relore-client": __version__}
        ).json()
        text = client.get(
            "/api/v1/status",
            params={"repo": REPO, "format": "text"},
            headers={"x-relore-client": __version__},
        )
    (repo,) = page["repos"]
    assert repo["deletions"]["checked_at"], repo
    assert all(not m["pass"].startswith("deletions") for m in repo["passes"])
    assert "deletions: last checked" in text.text


def test_a_review_comment_deleted_on_a_pr_whose_update_shows_is_caught_by_the_poll(
    indexed, github, world
):
    app, base_url = github
    url = indexed["url"]
    pr = world.planted["pr"]
    victim = world.review_comments_for(pr)[0]["id"]
    with app.state.lock:
        world.delete_review_comment(victim, touch_issue=True)
    # the PR's head moved: pull_details re-lands its pull, whose review_comments count fell
    poll = _extract(url, base_url)
    step = next(s for s in poll["steps"] if s["step"] == "deletions")
    assert "1 thread(s) re-read" in step["detail"], step
    assert _versions(url, "review_comment", victim) == [False, True]


def test_a_stored_link_to_the_apis_old_address_is_dropped_never_followed(indexed, github):
    """An older release stored absolute next-page URLs (host and port). After the API moved
    (GitHub Enterprise, or a second `make demo`, whose fake GitHub takes a new port) every
    run failed on them, and the token went to the old address. Now the next run succeeds,
    never contacts the old host, and what it stores is relative to the configured API."""
    from fixtures import http_trap

    _, base_url = github
    url = indexed["url"]
    with http_trap.serve(status=404, body={"message": "Not Found"}) as old:
        stale = f"{old.url}/repos/{REPO}/issues?state=all&sort=created&direction=asc&page=2"
        with psycopg.connect(url, autocommit=True) as conn:
            (repo_id,) = conn.execute(
                "select repo_id from ops.repos where full_name = %s", (REPO,)
            ).fetchone()
            conn.execute(
                "update ops.checkpoints set cursor = %s where repo_id = %s and pass_name = %s",
                (stale, repo_id, "deletions:rotation"),
            )
            conn.execute(
                "insert into ops.etags (repo_id, url, etag, next_url) values (%s, %s, %s, %s)",
                (repo_id, stale, '"old"', f"{old.url}/repos/{REPO}/issues?page=3"),
            )
        poll = _extract(url, base_url)
        assert old.seen == []  # not a request, let alone the token
    assert any(s["step"] == "deletions" for s in poll["steps"]), poll
    with psycopg.connect(url) as conn:
        (cursor,) = conn.execute(
            "select cursor from ops.checkpoints where repo_id = %s and pass_name = %s",
            (repo_id, "deletions:rotation"),
        ).fetchone()
        stored = conn.execute(
            "select url, next_url from ops.etags where repo_id = %s", (repo_id,)
        ).fetchall()
    assert cursor.startswith(f"repos/{REPO}/issues?"), cursor
    fresh = [(u, n) for u, n in stored if u != stale]
    assert fresh and all("://" not in u and "://" not in (n or "") for u, n in fresh), fresh
