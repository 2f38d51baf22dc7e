"""`relore status` says each repository's freshness in the hourly loop and the token's budget
the cycle recorded, from the marts' views over ops (`marts.repo_freshness`,
`marts.token_budget`, read by the reader through dbt, never a grant on ops); `relored doctor`
names the same repositories as behind, and why.

A private copy of the world: one repository extracted and then cycled for real
(`relored cycle` against its fake GitHub), the others written into ops as a cycle leaves them.
"""

from __future__ import annotations

import io
import json

import psycopg
import pytest
from fixtures import corpus
from fixtures import world as worlds
from starlette.testclient import TestClient

from relore.contract.version import __version__
from relore.extract.schedule import BULK_STEPS
from relore.operate import cli as relored
from relore.operate import database, doctor
from relore.serve.app import Settings, create_app

REPO = "acme/freshness"
FILLING, FILLING_ID = "acme/filling", 7_390_001  # a backfill the budget stopped part-way
FRESH, FRESH_ID = "acme/fresh", 7_390_002  # backfilled, polled ten minutes ago
LEFT_OUT, LEFT_OUT_ID = "acme/left-out", 7_390_003  # backfilled, in no cycle
OTHERS = {FILLING: FILLING_ID, FRESH: FRESH_ID, LEFT_OUT: LEFT_OUT_ID}
FILLING_MARK = "2021-03-04T05:06:07+00:00"

WORLD_PART = worlds.Part(REPO, corpus=lambda: corpus.generate(seed=39, threads=8, repo=REPO))


@pytest.fixture(scope="module")
def db(world_copy, indexed_world):
    """The copy, with the three other repositories known to ops, and no cycle yet (another
    suite's repository in the world may have landed one)."""
    with psycopg.connect(world_copy, autocommit=True) as conn:
        conn.execute("truncate ops.repo_cycles")
        for name, repo_id in OTHERS.items():
            conn.execute(
                "insert into ops.repos (repo_id, full_name, owner_login, owner_type) "
                "values (%s, %s, 'acme', 'Organization')",
                (repo_id, name),
            )
            done = BULK_STEPS[:2] if name == FILLING else BULK_STEPS
            for step in done:
                conn.execute(
                    "insert into ops.pass_runs (repo_id, pass_name, status, finished_at) "
                    "values (%s, %s, 'ok', now() - interval '1 day')",
                    (repo_id, step),
                )
        conn.execute(
            "insert into ops.checkpoints (repo_id, pass_name, high_water) values (%s, %s, %s)",
            (FILLING_ID, BULK_STEPS[2], FILLING_MARK),
        )
    return {"url": world_copy, "api": indexed_world.github[REPO][1]}


def _status(url: str) -> tuple[dict, str]:
    reader = database.reader_url(url, env={})
    headers = {"x-relore-client": __version__}
    with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
        page = client.get("/api/v1/status", headers=headers)
        text = client.get("/api/v1/status", params={"format": "text"}, headers=headers)
    assert page.status_code == 200 and text.status_code == 200, (page.text, text.text)
    return page.json(), text.text


def _repos(page: dict) -> dict[str, dict]:
    return {r["repo"]: r["freshness"] for r in page["repos"] if r["repo"] in (REPO, *OTHERS)}


def _lines_of(text: str, repo: str) -> list[str]:
    """The repository's block of the status page: its head line and the indented ones."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{repo}: "))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def _doctor_behind(url: str) -> dict[str, str]:
    """``relored doctor``'s schedule lines that warn, by repository (of this suite's: the
    world holds other suites' repositories, in no cycle)."""
    checks = doctor.run_checks(url, {})
    said = {c.name.removeprefix("schedule "): c for c in checks if c.name.startswith("schedule ")}
    return {
        name: c.detail for name, c in said.items() if c.level == "WARN" and name in (REPO, *OTHERS)
    }


def _cycle(db: dict) -> dict:
    env = {"RELORE_DATABASE_URL": db["url"], "RELORE_GITHUB_API_URL": db["api"],
           "GITHUB_TOKEN": "t"}  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    argv = ["cycle", "--repo", REPO, "--quiet", "--json"]
    code = relored.main(argv, env=env, out=out, err=err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_with_no_cycle_recorded_status_says_freshness_unknown_and_no_budget(db):
    """An empty ops.repo_cycles (a deployment that never ran `relored cycle`) breaks
    nothing: no repository is called behind, the budget is not recorded, doctor is quiet."""
    page, text = _status(db["url"])
    assert page["budget"] == {"recorded": False}
    fresh = _repos(page)
    assert {name: f["behind"] for name, f in fresh.items()} == dict.fromkeys(fresh)
    assert "token budget: not recorded (`relored cycle` has not run)" in text
    assert "  freshness: not known (no cycle of `relored cycle` recorded)" in _lines_of(text, REPO)
    assert "BEHIND" not in text
    assert _doctor_behind(db["url"]) == {}


def test_a_repository_whose_poll_is_older_than_a_cycle_is_behind_and_says_why(db):
    report = _cycle(db)  # a real cycle: the repository is backfilled, so this is its poll
    (turn,) = report["turns"]
    assert (turn["role"], turn["outcome"]) == ("poll", "done")
    with psycopg.connect(db["url"], autocommit=True) as conn:
        page, _ = _status(db["url"])
        assert _repos(page)[REPO]["behind"] is False, "polled a moment ago"
        # three hours pass without another cycle polling it
        conn.execute(
            "update ops.repo_cycles set started_at = started_at - interval '3 hours', "
            "finished_at = finished_at - interval '3 hours' where full_name = %s",
            (REPO,),
        )
        conn.execute(
            "insert into ops.repo_cycles (repo_id, cycle_id, full_name, role, outcome, "
            "started_at, finished_at, budget_limit, budget_remaining, budget_reset) values "
            "(%s, nextval('ops.cycle_ids'), %s, 'poll', 'done', now() - interval '10 minutes', "
            "now() - interval '9 minutes', 5000, 4321, now() + interval '50 minutes')",
            (FRESH_ID, FRESH),
        )
    page, text = _status(db["url"])
    fresh = _repos(page)
    assert fresh[REPO]["behind"] is True and fresh[REPO]["why"] == "stale", fresh[REPO]
    assert fresh[REPO]["last_poll_age"] == "3h"
    assert fresh[FRESH]["behind"] is False and fresh[FRESH]["last_poll_age"] == "9m"
    assert fresh[LEFT_OUT]["why"] == "never_cycled"
    (line,) = [x for x in _lines_of(text, REPO) if x.startswith("  BEHIND: ")]
    assert "last poll finished 3h ago" in line and "more than 90 min" in line, line
    assert "is the hourly loop running?" in line
    assert _lines_of(text, FRESH)[1].startswith("  freshness: last poll finished 9m ago")
    # the budget the latest turn recorded
    budget = page["budget"]
    assert (budget["remaining"], budget["limit"], budget["reset_passed"]) == (4321, 5000, False)
    assert budget["recorded_age"] == "9m"
    assert "token budget: 4,321 of 5,000 requests left, resets at " in text
    # doctor names the same repositories, with the same reasons
    said = _doctor_behind(db["url"])
    assert set(said) == {name for name, f in fresh.items() if f["behind"]}, said
    assert said[REPO].startswith("nothing of it finished for 3.0h, more than 90 min"), said
    assert said[LEFT_OUT].startswith("in no cycle of `relored cycle`"), said


def test_a_backfill_the_budget_stopped_says_how_far_it_got_and_why(db):
    with psycopg.connect(db["url"], autocommit=True) as conn:
        conn.execute(
            "insert into ops.repo_cycles (repo_id, cycle_id, full_name, role, outcome, "
            "finished_at, reason, budget_limit, budget_remaining, budget_reset) values "
            "(%s, nextval('ops.cycle_ids'), %s, 'backfill', 'budget', now(), %s, 5000, 100, "
            "now() - interval '1 minute')",
            (FILLING_ID, FILLING, "the token's core budget is down to the reserve (100)"),
        )
    page, text = _status(db["url"])
    filling = _repos(page)[FILLING]
    assert (filling["behind"], filling["why"]) == (True, "backfilling")
    assert filling["backfill"] == {
        "complete": False,
        "passes_done": 2,
        "passes": len(BULK_STEPS),
        "next_pass": BULK_STEPS[2],
        "high_water": FILLING_MARK,
    }
    assert filling["latest"]["outcome"] == "budget"
    block = _lines_of(text, FILLING)
    assert (
        f"  BEHIND: backfilling: 2 of 6 passes complete, next review_comments from {FILLING_MARK}"
        "; its backfill in cycle "
    ) in block[1], block
    assert "ran out of the token's budget; the next cycle resumes at its marks" in block[1]
    assert block[2] == "    why: ⟦the token's core budget is down to the reserve (100)⟧"
    # the budget is the newest recorded; its reset has passed since
    assert page["budget"]["remaining"] == 100 and page["budget"]["reset_passed"] is True
    assert "has passed: the hour's budget is whole again" in text
    said = _doctor_behind(db["url"])
    assert said[FILLING].startswith(
        "backfilling: the token's budget ran out during its backfill; the next cycle resumes "
        "at its marks (2 of 6 passes complete)"
    ), said
    fresh = _repos(page)
    assert set(said) == {name for name, f in fresh.items() if f["behind"]}, said
