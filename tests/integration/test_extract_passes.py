"""Extract passes against the fake GitHub over real HTTP: retries, cursors, resumption."""

from __future__ import annotations

import psycopg
import pytest
from fixtures import corpus, fake_github
from fixtures.fake_github_faults import drop, fail, secondary_limit

from relore.extract import checkpoints, passes, runner
from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.progress import Progress
from relore.operate.exits import ExitStatus

REPO = "acme/gadgets"


@pytest.fixture
def world():
    return corpus.generate(seed=3, threads=30, repo=REPO)


@pytest.fixture
def github(world):
    app = fake_github.create_app([world])
    with fake_github.serve(app) as base_url:
        yield app, base_url


def _client(base_url: str) -> GitHubClient:
    return GitHubClient(api_url=base_url, token="t", backoff=0.01, env={})


def _extract(url: str, base_url: str, pass_name: str = "auto") -> dict[str, int]:
    """Run a pass; return rows written per step."""
    with psycopg.connect(url, autocommit=True) as conn, _client(base_url) as client:
        report = runner.run(conn, client, REPO, pass_name, runner.Options(), Progress(None, client))
    assert report.outcome == runner.DONE, report.error
    return {step.step: step.written for step in report.steps}


def _distinct(url: str, object_type: str) -> tuple[int, int]:
    """(distinct objects, rows) of one type in raw."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(distinct object_id), count(*) from raw.github_objects "
            "where object_type = %s",
            (object_type,),
        ).fetchone()


def test_issue_walk_follows_cursor_links_and_lands_each_issue_once(db_url, github, world):
    app, base_url = github
    with psycopg.connect(db_url, autocommit=True) as conn, _client(base_url) as client:
        repo = passes.resolve_repo(conn, client, REPO)
        listing = passes.listings(REPO)[0]
        # small pages force several cursor hops
        listing = passes.Listing(
            listing.pass_name,
            listing.path,
            listing.object_type,
            listing.thread_number,
            params=(*listing.params, ("per_page", "7")),
        )
        result = passes.run_listing(conn, client, repo, listing)
    assert result.written == len(world.issues)
    assert _distinct(db_url, "issue") == (len(world.issues), len(world.issues))
    cursor_requests = [r for r in app.state.requests if "after" in r.params]
    assert cursor_requests, "the walk never followed an after= cursor"


def test_server_errors_and_dropped_connections_mid_body_are_retried(db_url, github, world):
    app, base_url = github
    app.state.faults.extend(
        [
            fail(502, path=r"/issues$", times=2),
            drop(path=r"/issues/comments$", times=1, skip=1),
            secondary_limit(path=r"/issues/comments$", retry_after=0, times=1, skip=2),
        ]
    )
    written = _extract(db_url, base_url)
    assert written["issues"] == len(world.issues)
    assert written["issue_comments"] == len(world.comments)
    assert all(f.hits == f.times for f in app.state.faults)


def test_a_poll_lands_only_what_changed_upstream(db_url, github, world):
    _app, base_url = github
    _extract(db_url, base_url)
    number = world.issues[0]["number"]
    world.add_comment(number, "A new finding about the cache eviction order.")
    second = _extract(db_url, base_url)
    # the new comment, and its thread's new version (comment count and updated_at moved)
    assert (second["issues"], second["issue_comments"]) == (1, 1)
    assert _distinct(db_url, "issue_comment") == (len(world.comments), len(world.comments))


def test_failed_pass_keeps_its_mark_at_the_last_committed_page_and_resumes_whole(
    db_url, github, world
):
    app, base_url = github
    # the comment walk's third page can never be served during the first run
    app.state.faults.append(fail(500, path=r"/issues/comments$", times=None, skip=2))
    with psycopg.connect(db_url, autocommit=True) as conn, _client(base_url) as client:
        repo = passes.resolve_repo(conn, client, REPO)
        client.max_attempts = 2
        listing = passes.listings(REPO)[1]
        listing = passes.Listing(
            listing.pass_name,
            listing.path,
            listing.object_type,
            listing.thread_number,
            params=(("per_page", "10"),),
        )
        with pytest.raises(GitHubError) as info:
            passes.run_listing(conn, client, repo, listing)
        assert "issues/comments" in info.value.url
        mark = checkpoints.high_water(conn, repo.repo_id, "issue_comments")
        landed, _rows = _distinct(db_url, "issue_comment")
        assert landed == 20
        ordered = sorted(world.comments, key=lambda c: (c["updated_at"], c["id"]))
        assert mark.strftime("%Y-%m-%dT%H:%M:%SZ") == ordered[19]["updated_at"]
        run = conn.execute(
            "select status, error from ops.pass_runs where pass_name = 'issue_comments'"
        ).fetchone()
        assert run[0] == "failed" and "issues/comments" in run[1]

        app.state.faults.clear()
        result = passes.run_listing(conn, client, repo, listing)
    assert _distinct(db_url, "issue_comment") == (len(world.comments), len(world.comments))
    assert result.written == len(world.comments) - 20


def _listing(name: str, per_page: int) -> passes.Listing:
    base = next(x for x in passes.listings(REPO) if x.pass_name == name)
    return passes.Listing(
        base.pass_name,
        base.path,
        base.object_type,
        base.thread_number,
        params=(*base.params, ("per_page", str(per_page))),
    )


def test_threads_sharing_the_marks_second_are_not_skipped_on_resume(db_url, github, world):
    app, base_url = github
    group = world.facts["same_updated_at"][0]
    assert len(group) >= 3
    ordered = sorted(world.issues, key=lambda i: (i["updated_at"], i["id"]))
    first = next(k for k, issue in enumerate(ordered) if issue["number"] in group)
    page_with_part_of_group = first // 2
    # every page after the one holding the group's first member fails during run one
    app.state.faults.append(
        fail(500, path=r"/issues$", times=None, skip=page_with_part_of_group + 1)
    )
    with psycopg.connect(db_url, autocommit=True) as conn, _client(base_url) as client:
        client.max_attempts = 1
        repo = passes.resolve_repo(conn, client, REPO)
        with pytest.raises(GitHubError):
            passes.run_listing(conn, client, repo, _listing("issues", 2))
        mark = checkpoints.high_water(conn, repo.repo_id, "issues")
        assert mark.strftime("%Y-%m-%dT%H:%M:%SZ") == ordered[first]["updated_at"]
        app.state.faults.clear()
        passes.run_listing(conn, client, repo, _listing("issues", 2))
    assert _distinct(db_url, "issue") == (len(world.issues), len(world.issues))


def test_walk_capped_at_a_fixed_item_count_chains_from_its_mark_until_complete(db_url, world):
    app = fake_github.create_app([world], comment_cap=40)
    assert len(world.comments) > 120
    with (
        fake_github.serve(app) as base_url,
        psycopg.connect(db_url, autocommit=True) as conn,
        _client(base_url) as client,
    ):
        repo = passes.resolve_repo(conn, client, REPO)
        result = passes.run_listing(conn, client, repo, _listing("issue_comments", 10))
    assert result.written == len(world.comments)
    assert _distinct(db_url, "issue_comment") == (len(world.comments), len(world.comments))


def test_page_that_can_never_be_served_ends_partial_naming_the_url_not_exit_zero(
    db_url, github, world
):
    import io

    from relore.operate import cli

    app, base_url = github
    app.state.faults.append(fail(502, path=r"/pulls/comments$", times=None))
    env = {
        "RELORE_DATABASE_URL": db_url,
        "RELORE_GITHUB_API_URL": base_url,
        "GITHUB_TOKEN": "t",
        "RELORE_GITHUB_BACKOFF": "0.01",
    }
    for attempt in (1, 2):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["extract", "--repo", REPO, "--quiet"], env=env, out=out, err=err)
        assert code == ExitStatus.PARTIAL, (attempt, err.getvalue())
        assert "/pulls/comments" in err.getvalue()
        assert "partial" in out.getvalue()
    assert "failed 2 times in a row landing nothing" in err.getvalue()
    assert _distinct(db_url, "issue")[0] == len(world.issues)  # what could land, landed


def test_primary_rate_limit_waits_for_the_reset_then_goes_on(db_url, github, world):
    from fixtures.fake_github_faults import primary_limit

    app, base_url = github
    app.state.faults.append(primary_limit(status=403, reset_in=1, path=r"/issues$"))
    import time

    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        time.sleep(seconds)

    client = GitHubClient(api_url=base_url, token="t", env={}, sleep=sleep)
    with psycopg.connect(db_url, autocommit=True) as conn, client:
        repo = passes.resolve_repo(conn, client, REPO)
        result = passes.run_listing(conn, client, repo, passes.listings(REPO)[0])
    assert result.written == len(world.issues)
    assert waits and 0 < waits[0] <= 3, "waited for x-ratelimit-reset, not a blind backoff"


def test_an_unauthenticated_extract_says_so_up_front_with_its_limit(db_url, github):
    import io

    from relore.operate import cli

    _, base_url = github
    env = {"RELORE_DATABASE_URL": db_url, "RELORE_GITHUB_API_URL": base_url}
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["extract", "issues", "--repo", REPO, "--quiet"], env=env, out=out, err=err)
    said = err.getvalue()
    assert code == ExitStatus.OK, said
    assert said.startswith("relored extract: no GITHUB_TOKEN"), said
    assert "60 requests an hour" in said and "export GITHUB_TOKEN" in said
    out, err = io.StringIO(), io.StringIO()
    cli.main(["extract", "issues", "--repo", REPO, "--quiet"], env={**env, "GITHUB_TOKEN": "t"},
             out=out, err=err)  # fmt: skip
    assert "GITHUB_TOKEN" not in err.getvalue()
