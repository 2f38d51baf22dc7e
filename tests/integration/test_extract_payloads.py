"""Pages and payloads GitHub sends that a naive extractor loses: HTML instead of JSON, JSON
cut short, text JSONB refuses, a 10 MB comment; and the bound on concurrent fetches."""

from __future__ import annotations

import asyncio
import io

import psycopg
from fixtures import corpus, fake_github
from fixtures.fake_github_faults import not_json, truncate

from relore.extract import runner
from relore.extract.github_client import GitHubClient
from relore.extract.progress import Progress

REPO = "acme/payloads"


def _run(db_url, base_url, pass_name, **options) -> runner.RunReport:
    client = GitHubClient(api_url=base_url, token="t", backoff=0.01, env={})
    with psycopg.connect(db_url, autocommit=True) as conn, client:
        report = runner.run(
            conn, client, REPO, pass_name, runner.Options(**options), Progress(None, client)
        )
    assert report.outcome == runner.DONE, report.error
    return report


def test_html_error_page_and_truncated_json_are_asked_again_and_nothing_is_lost(db_url):
    world = corpus.generate(seed=12, threads=30, repo=REPO)
    app = fake_github.create_app(
        [world], faults=[not_json(path=r"/issues/comments$"), truncate(path=r"/issues$")]
    )
    with fake_github.serve(app) as base_url:
        issues = _run(db_url, base_url, "issues")
        comments = _run(db_url, base_url, "issue_comments")
    assert issues.steps[0].written == len(world.issues)
    assert comments.steps[0].written == len(world.comments)
    assert all(f.hits == 1 for f in app.state.faults)


def test_comment_with_nul_and_lone_surrogate_lands_scrubbed_beside_a_10mb_comment(db_url):
    world = corpus.generate(
        seed=13, threads=20, repo=REPO, hostile_text=True, huge_comment_bytes=10_000_000
    )
    with fake_github.serve(fake_github.create_app([world])) as base_url:
        report = _run(db_url, base_url, "issue_comments")
    assert report.steps[0].written == len(world.comments)
    hostile = world.facts["hostile_comment"]["comment_id"]
    huge = world.facts["huge_comment"]
    with psycopg.connect(db_url) as conn:
        body = conn.execute(
            "select payload->>'body' from raw.github_objects where object_id = %s", (hostile,)
        ).fetchone()[0]
        quarantined = conn.execute("select object_id, reason from ops.quarantine").fetchall()
        size = conn.execute(
            "select octet_length(payload->>'body') from raw.github_objects where object_id = %s",
            (huge["comment_id"],),
        ).fetchone()[0]
    assert "\ufffd" in body
    assert [q[0] for q in quarantined] == [hostile]
    assert size >= huge["bytes"]


def test_thread_fetches_run_concurrently_but_never_beyond_the_workers_bound(db_url):
    world = corpus.generate(seed=14, threads=24, repo=REPO)
    inner = fake_github.create_app([world])
    state = {"now": 0, "peak": 0}

    async def counting(scope, receive, send):
        if scope["type"] != "http" or "/issues/" not in scope["path"]:
            await inner(scope, receive, send)
            return
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        try:
            await asyncio.sleep(0.02)
            await inner(scope, receive, send)
        finally:
            state["now"] -= 1

    numbers = tuple(i["number"] for i in world.issues if "pull_request" not in i)[:12]
    with fake_github.serve(counting) as base_url:
        _run(db_url, base_url, "thread", numbers=numbers, workers=3)
    assert 1 < state["peak"] <= 3


def test_progress_lines_say_items_requests_and_rate_budget():
    client = GitHubClient(api_url="http://127.0.0.1:9", env={})
    client.stats.requests, client.stats.rate_remaining, client.stats.rate_reset = 7, 4990, None
    out = io.StringIO()
    progress = Progress(out, client, interval=0)
    progress.update("sample:pr: 3/10 threads, 40 written", 3, 10)
    line = out.getvalue()
    assert "3/10 threads" in line and "7 requests" in line and "rate 4990 left" in line
    assert "eta" in line
