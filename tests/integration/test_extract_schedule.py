"""Many repositories, one token: `relored cycle` against the fake GitHub's real rate limits,
hours of budget on a simulated clock (tests/fixtures/sim_clock.py)."""

from __future__ import annotations

import io
import json
import math
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from fixtures import corpus, fake_github
from fixtures.sim_clock import SimClock

from relore.operate import cli, doctor

pytestmark = pytest.mark.slow
RELORED = str(Path(sys.executable).parent / "relored")
BIG = "acme/big"


def _smalls(count: int, threads: int = 10) -> list:
    return [
        corpus.generate(seed=40 + i, threads=threads, repo=f"acme/small{i}", comments_per_thread=3)
        for i in range(count)
    ]


def _cycle(db_url: str, base_url: str, repos: list[str], *extra: str) -> tuple[int, dict]:
    env = {"RELORE_DATABASE_URL": db_url, "RELORE_GITHUB_API_URL": base_url, "GITHUB_TOKEN": "t"}
    argv = ["cycle", *(a for r in repos for a in ("--repo", r)), "--quiet", "--json", *extra]
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(argv, env=env, out=out, err=err)
    assert code in (0, 3), (code, out.getvalue(), err.getvalue())
    return code, json.loads(out.getvalue())


def _duplicate_versions(db_url: str) -> int:
    """Rows in raw that repeat a version of their object already landed (same payload)."""
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "select count(*) - count(distinct (repo_id, object_type, object_id, "
            "coalesce(payload_hash, 'tombstone'))) from raw.github_objects"
        ).fetchone()[0]


def _landed(db_url: str, world, object_type: str) -> int:
    with psycopg.connect(db_url) as conn:
        return conn.execute(
            "select count(distinct object_id) from raw.github_objects "
            "where repo_id = %s and object_type = %s",
            (world.repo_id, object_type),
        ).fetchone()[0]


def _assert_every_thread_once(db_url: str, worlds) -> None:
    assert _duplicate_versions(db_url) == 0
    for world in worlds:
        assert _landed(db_url, world, "issue") == len(world.issues), world.full_name
        assert _landed(db_url, world, "issue_comment") == len(world.comments), world.full_name


def _spent(requests) -> int:
    """Requests that cost the primary limit: neither a 304 nor GET /rate_limit."""
    return sum(1 for r in requests if r.status != 304 and r.path != "/rate_limit")


def test_a_backfill_out_of_budget_resumes_each_hour_where_it_stopped_without_a_refusal(db_url):
    limit = 70
    clock = SimClock()
    big = corpus.generate(seed=9, threads=60, repo=BIG, comments_per_thread=6)
    worlds = [big, *_smalls(2)]
    app = fake_github.create_app(worlds, rate_limit=limit, graphql_limit=limit, clock=clock)
    repos = [w.full_name for w in worlds]
    with fake_github.serve(app) as base_url:
        hours = 0
        while True:
            hours += 1
            assert hours < 40, "the backfill never finished"
            code, report = _cycle(db_url, base_url, repos)
            if code == 0:
                break
            if hours == 1:
                said = [c.line() for c in doctor.run_checks(db_url, {}) if "schedule" in c.name]
                assert any(
                    line.startswith(f"WARN schedule {BIG}: backfilling: the token's budget ran")
                    for line in said
                ), said
                assert " of 70 requests left" in said[0], said
            clock.advance(3600)
    requests = app.state.requests
    refused = [r for r in requests if r.status in (403, 429)]
    assert not refused, f"GitHub refused {len(refused)} requests: the cycle spent past the limit"
    _assert_every_thread_once(db_url, worlds)
    pulls = [
        r.path
        for r in requests
        if r.status == 200 and r.path.split("/")[-2] == "pulls" and r.path[-1].isdigit()
    ]
    assert len(pulls) == len(set(pulls)), "a pull request was fetched twice"
    listing_pages = [
        r.url for r in requests if r.status == 200 and r.path.endswith(("/issues", "/comments"))
    ]
    repeated = {u for u in listing_pages if listing_pages.count(u) > 1}
    assert not repeated, f"listing pages fetched twice: {sorted(repeated)[:3]}"
    # the fewest hours the limit allows: every hour but the last spent down to the reserve
    reserve = report["reserve"]
    assert hours <= math.ceil(_spent(requests) / (limit - reserve)) + 1, (hours, _spent(requests))


def test_a_repository_in_backfill_never_delays_another_repositorys_poll(db_url):
    clock = SimClock()
    big = corpus.generate(seed=9, threads=300, repo=BIG, comments_per_thread=6)
    smalls = _smalls(3)
    app = fake_github.create_app([big, *smalls], rate_limit=80, graphql_limit=80, clock=clock)
    repos = [BIG] + [w.full_name for w in smalls]  # the big one named first
    with fake_github.serve(app) as base_url:
        backfilled: set[str] = set()
        while len(backfilled) < len(smalls):  # the small ones first, the big one after
            code, report = _cycle(db_url, base_url, repos)
            assert code == 3 and len(backfilled) < len(smalls)
            done = {t["repo"] for t in report["turns"] if t["outcome"] == "done"}
            backfilled |= done - {BIG}
            clock.advance(3600)
        cycles_in_backfill = 0
        for hour in range(1, 30):
            clock.advance(3600 if hour % 2 else 600)  # some cycles start before the reset
            for n, small in enumerate(smalls):
                with app.state.lock:
                    small.add_comment(small.issues[0]["number"], f"hour {hour} finding {n}")
            code, report = _cycle(db_url, base_url, repos)
            turns = report["turns"]
            assert [t["role"] for t in turns][: len(smalls)] == ["poll"] * len(smalls)
            for small in smalls:
                # a cycle starting in a fresh window polls everything; one started before the
                # reset may leave a poll to the next cycle, never longer
                waited = len(small.comments) - _landed(db_url, small, "issue_comment")
                assert waited <= (0 if hour % 2 else 1), f"{small.full_name}: hour {hour}"
            if code == 0:
                break
            cycles_in_backfill += 1
        assert cycles_in_backfill >= 2, "the big backfill ended too soon to prove anything"
        assert code == 0
    _assert_every_thread_once(db_url, [big, *smalls])


def test_an_idle_cycle_over_many_repositories_costs_at_most_two_rate_limited_requests_each(
    db_url,
):
    worlds = _smalls(12)
    app = fake_github.create_app(worlds)
    repos = [w.full_name for w in worlds]
    with fake_github.serve(app) as base_url:
        code, _ = _cycle(db_url, base_url, repos)
        assert code == 0
        spent = []
        for _ in range(2):
            before = len(app.state.requests)
            code, report = _cycle(db_url, base_url, repos)
            assert code == 0 and {t["role"] for t in report["turns"]} == {"poll"}
            spent.append(_spent(app.state.requests[before:]))
    assert all(s <= 2 * len(repos) for s in spent), f"idle cycles cost {spent} for {len(repos)}"
    assert spent[-1] == 0, f"the second idle cycle still cost {spent[-1]}: every answer was 304"


def _killing(app, victim: dict):
    """The fake GitHub, SIGKILLing the cycle's process at its ``victim['at']``-th request."""

    async def killer(scope, receive, send):
        if scope["type"] == "http" and victim.get("pid"):
            victim["seen"] += 1
            if victim["seen"] == victim.get("at"):
                os.kill(victim["pid"], signal.SIGKILL)
                victim["killed"] = True
        await app(scope, receive, send)

    return killer


def test_a_backfill_killed_at_random_points_across_simulated_hours_lands_every_thread_once(
    db_url,
):
    rng = random.Random(39)
    clock = SimClock()
    big = corpus.generate(seed=12, threads=150, repo=BIG, comments_per_thread=6)
    worlds = [big, *_smalls(2, threads=8)]
    inner = fake_github.create_app(worlds, rate_limit=60, graphql_limit=60, clock=clock)
    victim: dict = {}
    argv = [RELORED, "cycle", "--quiet"] + [a for w in worlds for a in ("--repo", w.full_name)]
    kills = runs = 0
    with fake_github.serve(_killing(inner, victim)) as base_url:
        env = {
            **os.environ,
            "RELORE_DATABASE_URL": db_url,
            "RELORE_GITHUB_API_URL": base_url,
            "GITHUB_TOKEN": "t",
        }
        while True:
            runs += 1
            assert runs < 60, "the backfill never finished"
            victim.update(seen=0, killed=False, pid=None, at=rng.randint(1, 40))
            if rng.random() < 0.2:
                victim["at"] = None  # a cycle left to end on its own
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            victim["pid"] = proc.pid
            out, err = proc.communicate(timeout=300)
            if victim["killed"]:
                assert proc.returncode == -signal.SIGKILL
                kills += 1
                if rng.random() < 0.5:
                    clock.advance(3600)
                continue
            assert proc.returncode in (0, 3), (proc.returncode, out, err)
            if proc.returncode == 0:
                break
            clock.advance(3600)
    assert kills >= 5, f"only {kills} kills: the test proved little"
    _assert_every_thread_once(db_url, worlds)


def _asked_permission(requests) -> list[str]:
    return [r.path.split("/")[-2] for r in requests if r.path.endswith("/permission")]


def test_with_authority_a_poll_asks_only_new_authors_and_without_it_none(db_url):
    """The loop's `relored cycle --authority` replaces a `relored extract authority` per
    repository: a new author's write access is asked in the poll's cycle, within the budget,
    and an author already asked costs nothing."""
    (small,) = _smalls(1)
    app = fake_github.create_app([small])
    issue = small.issues[0]["number"]
    with fake_github.serve(app) as base_url:
        _cycle(db_url, base_url, [small.full_name])  # the backfill asks every author once
        with app.state.lock:
            small.add_comment(issue, "first words here", login="newcomer-one")
        before = len(app.state.requests)
        _, report = _cycle(db_url, base_url, [small.full_name])
        assert _asked_permission(app.state.requests[before:]) == []  # not asked for
        with app.state.lock:
            small.add_comment(issue, "and mine", login="newcomer-two")
        before = len(app.state.requests)
        code, report = _cycle(db_url, base_url, [small.full_name], "--authority")
        asked = _asked_permission(app.state.requests[before:])
        assert sorted(asked) == ["newcomer-one", "newcomer-two"], asked
        (turn,) = report["turns"]
        assert (code, turn["role"], turn["outcome"]) == (0, "poll", "done")
        assert turn["requests"] >= len(asked)  # counted in the poll's turn
        before = len(app.state.requests)
        _cycle(db_url, base_url, [small.full_name], "--authority")
        assert _asked_permission(app.state.requests[before:]) == []
    with psycopg.connect(db_url) as conn:
        logins = {r[0] for r in conn.execute("select login from ops.collaborator_permissions")}
    assert {"newcomer-one", "newcomer-two"} <= logins
