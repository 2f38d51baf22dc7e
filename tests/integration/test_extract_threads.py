"""Thread-level passes against the fake GitHub: whole threads, pull details, reviews over
GraphQL, authority, sample, sweep, orphans, and the cost of an idle poll."""

from __future__ import annotations

import psycopg
import pytest
from fixtures import corpus, fake_github

from relore.extract import runner
from relore.extract.github_client import GitHubClient
from relore.extract.progress import Progress

REPO = "acme/threads"


@pytest.fixture
def world():
    return corpus.generate(seed=4, threads=40, repo=REPO, huge_pr_files=3100)


@pytest.fixture
def github(world):
    app = fake_github.create_app([world])
    with fake_github.serve(app) as base_url:
        yield app, base_url


def _run(db_url, base_url, pass_name="auto", **options) -> runner.RunReport:
    client = GitHubClient(api_url=base_url, token="t", backoff=0.01, env={})
    with psycopg.connect(db_url, autocommit=True) as conn, client:
        report = runner.run(
            conn, client, REPO, pass_name, runner.Options(**options), Progress(None, client)
        )
    assert report.outcome == runner.DONE, report.error
    return report


def _current(db_url, object_type: str, number: int | None = None) -> dict[int, bool]:
    """object_id -> is_deleted, for the latest version of each object of a type."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            """
            select distinct on (object_id) object_id, is_deleted
            from raw.github_objects
            where object_type = %s and (%s::int is null or thread_number = %s)
            order by object_id, row_id desc
            """,
            (object_type, number, number),
        ).fetchall()
    return dict(rows)


def _first_pr_with_review_comments(world) -> int:
    return next(n for n in world.pull_numbers() if len(world.review_comments_for(n)) >= 2)


def test_thread_fetch_lands_a_pull_request_whole_and_never_its_patches(db_url, github, world):
    _app, base_url = github
    number = _first_pr_with_review_comments(world)
    _run(db_url, base_url, "thread", numbers=(number,))
    assert len(_current(db_url, "issue_comment", number)) == len(world.comments_for(number))
    assert len(_current(db_url, "review_comment", number)) == len(world.review_comments_for(number))
    assert len(_current(db_url, "review", number)) == len(world.reviews_for(number))
    assert len(_current(db_url, "pull", number)) == 1
    files = _current(db_url, "pull_file", number)
    assert len(files) == len(world.pull_files(number))
    with psycopg.connect(db_url) as conn:
        with_patch = conn.execute(
            "select count(*) from raw.github_objects where object_type = 'pull_file' "
            "and payload ? 'patch'"
        ).fetchone()[0]
    assert with_patch == 0, "source code (a patch) reached the database"


def test_refetch_tombstones_what_vanished_and_leaves_other_types_alone(db_url, github, world):
    _app, base_url = github
    number = _first_pr_with_review_comments(world)
    _run(db_url, base_url, "thread", numbers=(number,))
    gone = world.review_comments_for(number)[0]["id"]
    world.delete_review_comment(gone)
    _run(db_url, base_url, "thread", numbers=(number,))
    current = _current(db_url, "review_comment", number)
    assert current[gone] is True
    assert sum(not deleted for deleted in current.values()) == len(
        world.review_comments_for(number)
    )
    assert not any(_current(db_url, "issue_comment", number).values())


def test_deleted_and_transferred_issues_tombstone_their_whole_thread(db_url, github, world):
    _app, base_url = github
    issues = [i["number"] for i in world.issues if "pull_request" not in i and i["comments"]]
    deleted, moved = issues[0], issues[1]
    _run(db_url, base_url, "thread", numbers=(deleted, moved))
    world.delete_issue(deleted)
    world.transfer_issue(moved, corpus.generate(seed=9, threads=12, repo="acme/elsewhere"))
    report = _run(db_url, base_url, "thread", numbers=(deleted, moved))
    assert report.steps[0].detail == "2 gone upstream"
    for number in (deleted, moved):
        assert all(_current(db_url, "issue", number).values())
        assert all(_current(db_url, "issue_comment", number).values())


def _quarantined(db_url, number: int) -> list[str]:
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "select reason from ops.quarantine where object_type = 'issue' "
            "and thread_number = %s order by quarantine_id",
            (number,),
        ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("oddity", ["absent", "null", "not a URL"])
def test_an_issue_whose_repository_url_is_missing_lands_and_is_recorded_not_tombstoned(
    db_url, github, world, oddity
):
    _app, base_url = github
    number = next(i["number"] for i in world.issues if "pull_request" not in i and i["comments"])
    _run(db_url, base_url, "thread", numbers=(number,))
    if oddity == "absent":
        world.drop_issue_fields(number, "repository_url")
    else:
        world.edit_issue(number, repository_url=None if oddity == "null" else 42)
    report = _run(db_url, base_url, "thread", numbers=(number,))
    assert report.steps[0].detail is None, report.steps[0].detail  # nothing gone upstream
    assert not any(_current(db_url, "issue", number).values())
    comments = _current(db_url, "issue_comment", number)
    assert len(comments) == len(world.comments_for(number)) and not any(comments.values())
    reasons = _quarantined(db_url, number)
    assert len(reasons) == 1 and "repository_url" in reasons[0], reasons
    _run(db_url, base_url, "thread", numbers=(number,))  # the same oddity again: one record
    assert len(_quarantined(db_url, number)) == 1


def test_a_transfer_is_concluded_from_the_redirect_or_another_repository_named(db_url, world):
    elsewhere = corpus.generate(seed=9, threads=12, repo="acme/elsewhere")
    app = fake_github.create_app([world, elsewhere])
    issues = [i["number"] for i in world.issues if "pull_request" not in i and i["comments"]]
    moved, named = issues[0], issues[1]
    with fake_github.serve(app) as base_url:
        _run(db_url, base_url, "thread", numbers=(moved, named))
        world.transfer_issue(moved, elsewhere)  # GitHub answers 301 to the new issue
        world.edit_issue(named, repository_url="https://api.github.com/repos/acme/elsewhere")
        report = _run(db_url, base_url, "thread", numbers=(moved, named))
    assert report.steps[0].detail == "2 gone upstream"
    for number in (moved, named):
        assert all(_current(db_url, "issue", number).values())
        assert all(_current(db_url, "issue_comment", number).values())
    assert _quarantined(db_url, moved) == _quarantined(db_url, named) == []


def test_a_redirect_to_the_same_repository_under_a_new_name_is_not_a_transfer(github, world):
    from relore.extract import threads
    from relore.extract.landing import Repo

    _app, base_url = github
    world.former_names.append("acme/threads-old")
    number = next(i["number"] for i in world.issues if "pull_request" not in i)
    with GitHubClient(api_url=base_url, token="t", backoff=0.01, env={}) as client:
        fetched = threads.fetch_thread(client, Repo(world.repo_id, "acme/threads-old"), number)
    assert fetched.gone is None and fetched.objects[0].object_type == "issue"


def test_a_pull_request_listing_more_than_3000_files_is_recorded_as_truncated(
    db_url, github, world
):
    _app, base_url = github
    huge = world.facts["many_files_pr"]
    _run(db_url, base_url, "issues")
    _run(db_url, base_url, "pull_details")
    with psycopg.connect(db_url) as conn:
        walks = {
            number: rest
            for number, *rest in conn.execute(
                "select number, files_listed, changed_files, truncated from ops.pull_file_walks"
            ).fetchall()
        }
    assert walks[huge["number"]] == [huge["listed"], huge["changed_files"], True]
    assert len(walks) == len(world.pull_numbers())
    small = next(n for n in world.pull_numbers() if n not in world.facts["many_files_prs"])
    assert walks[small][2] is False


def test_reviews_of_every_pr_arrive_in_graphql_batches_of_25(db_url, world):
    many = corpus.generate(seed=8, threads=160, repo=REPO)
    merged = many.pull_numbers()
    assert len(merged) > 25 and len(merged) > len(many.facts["merged_pr_numbers"])
    app = fake_github.create_app([many])
    with fake_github.serve(app) as base_url:
        _run(db_url, base_url, "issues")
        report = _run(db_url, base_url, "reviews")
        graphql = [r for r in app.state.requests if r.path.endswith("graphql")]
    assert report.steps[0].seen == len(merged)
    assert len(graphql) == -(-len(merged) // 25)
    expected = sum(len(many.reviews_for(n)) for n in merged)
    assert len(_current(db_url, "review_graphql")) == expected


def test_authority_resolves_members_write_access_into_ops(db_url, github, world):
    _app, base_url = github
    _run(db_url, base_url, "issues")
    _run(db_url, base_url, "issue_comments")
    report = _run(db_url, base_url, "authority")
    with psycopg.connect(db_url) as conn:
        resolved = dict(
            conn.execute("select login, permission from ops.collaborator_permissions").fetchall()
        )
    assert report.steps[0].seen == len(resolved) > 0
    roles = world.facts["permissions"]
    associations = world.facts["associations"]
    for login, permission in resolved.items():
        assert associations[login] not in ("OWNER", "COLLABORATOR")
        assert permission == roles.get(login, "none")
    again = _run(db_url, base_url, "authority")
    assert again.steps[0].seen == 0, "asked again within the recheck window"


def test_sample_fetches_whole_threads_from_its_floor_and_records_it(db_url, github, world):
    _app, base_url = github
    prs = sorted((i for i in world.issues if "pull_request" in i), key=lambda i: i["created_at"])
    floor = prs[len(prs) // 2]["created_at"]
    from datetime import datetime

    since = datetime.fromisoformat(floor.replace("Z", "+00:00"))
    report = _run(db_url, base_url, "sample", since=since, kind="pr")
    expected = [p["number"] for p in prs if p["created_at"] >= floor]
    assert report.steps[0].step == "sample:pr"
    assert report.steps[0].seen == len(expected)
    assert sorted(_current(db_url, "pull")) != []
    assert set(_current(db_url, "issue")) == {
        i["id"] for i in world.issues if i["number"] in expected
    }
    with psycopg.connect(db_url) as conn:
        floors = conn.execute("select pass_name, floor, kind from ops.sample_floors").fetchall()
        marks = [r[0] for r in conn.execute("select pass_name from ops.checkpoints").fetchall()]
    assert [(p, k) for p, _, k in floors] == [("sample:pr", "pr")]
    assert "sample:pr" in marks and "issues" not in marks


def test_sweep_tombstones_a_thread_deleted_since_it_was_indexed(db_url, github, world):
    _app, base_url = github
    _run(db_url, base_url, "issues")
    victim = next(i["number"] for i in world.issues if "pull_request" not in i)
    world.delete_issue(victim)
    report = _run(db_url, base_url, "sweep")
    assert report.steps[0].detail.startswith("1 gone upstream;"), report.steps[0].detail
    assert all(_current(db_url, "issue", victim).values())


def test_comments_whose_thread_never_arrived_are_counted_and_do_not_block(db_url, github, world):
    _app, base_url = github
    _run(db_url, base_url, "issue_comments")
    victim = next(i for i in world.issues if "pull_request" not in i and i["comments"])
    world.delete_issue(victim["number"])
    report = _run(db_url, base_url, "issues")
    assert report.orphan_threads == 1
    assert report.orphan_comments == victim["comments"]


def test_idle_poll_costs_nothing_beyond_its_304s(db_url, github, world):
    app, base_url = github
    _run(db_url, base_url, "poll")
    before = len(app.state.requests)
    report = _run(db_url, base_url, "poll")
    assert report.written == 0
    # nothing re-fetched at the marks' second, and the repository lookup revalidates by its
    # ETag too (a 304 costs no rate limit with a token)
    assert [r.path for r in app.state.requests[before:] if r.status != 304] == []
    # the repository, three listings' first pages, the deletion check's rotating page
    assert sum(r.status == 304 for r in app.state.requests[before:]) == 5


def test_sample_of_merged_prs_takes_only_merged_ones(db_url, github, world):
    from datetime import UTC, datetime

    _app, base_url = github
    report = _run(
        db_url, base_url, "sample", since=datetime(2000, 1, 1, tzinfo=UTC), kind="pr", merged=True
    )
    assert report.steps[0].seen == len(world.facts["merged_pr_numbers"])
    with psycopg.connect(db_url) as conn:
        runs = conn.execute("select pass_name, status from ops.pass_runs").fetchall()
    assert runs == [("sample:pr", "ok")]


def test_auto_backfills_a_new_repository_and_polls_an_indexed_one(db_url, github, world):
    _app, base_url = github
    first = _run(db_url, base_url)
    assert [s.step for s in first.steps][-1] == "authority"
    second = _run(db_url, base_url)
    assert "authority" not in [s.step for s in second.steps]
    assert second.written == 0
