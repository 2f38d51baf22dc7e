"""The writer's runs: a recent successful extract per repository, and each pass
neither wedged, stuck running nor failing for an API that never answered."""

from __future__ import annotations

import psycopg

from relore.extract import github_urls
from relore.operate.doctor.check import FAIL, OK, WARN, Check, _age, _short

EXTRACT_WARN_HOURS = 24  # no successful extract run in a day: the cron is not running
EXTRACT_FAIL_HOURS = 24 * 7  # a week: the index is stale enough to mislead
WEDGED_AFTER = 2  # failed runs in a row landing nothing (the runner's own threshold)
STUCK_RUNNING_HOURS = 6  # a run "running" this long was killed or hangs


def _unreachable_action(error: str | None, env) -> str | None:
    """What to check when a run failed because nothing answered at the GitHub API it asked
    (the second `make demo` once asked the previous run's fake GitHub): never "wait for the
    next run", which asks the same address."""
    asked = github_urls.unreachable_origin(error)
    if asked is None:
        return None
    configured = env.get("RELORE_GITHUB_API_URL") or ""
    if github_urls.same_origin(asked, configured or github_urls.DEFAULT_API_URL):
        return (
            f"nothing answered at {asked}, the API RELORE_GITHUB_API_URL names: check it is up "
            "and reachable from where the extract runs (a demo's fake GitHub takes a new port "
            "each run), or set RELORE_GITHUB_API_URL to where it answers; the next run asks "
            "the same address"
        )
    here = configured or f"unset ({github_urls.DEFAULT_API_URL})"
    return (
        f"the run could not connect to {asked}, but RELORE_GITHUB_API_URL here is {here}: run "
        "the extract with RELORE_GITHUB_API_URL set to where the API answers (a demo's fake "
        "GitHub takes a new port each run), else the next run asks the same address"
    )


def _repos(conn: psycopg.Connection) -> list[tuple[int, str]]:
    return [tuple(r) for r in conn.execute("select repo_id, full_name from ops.repos order by 2")]


def check_extract_recent(conn: psycopg.Connection, repos, env=None) -> list[Check]:
    if not repos:
        return [
            Check(
                WARN,
                "extract",
                "no repository has been extracted",
                "run `relored extract --repo owner/name`",
            )
        ]
    ages = dict(
        conn.execute(
            """
            select repo_id, extract(epoch from now() - max(finished_at))::float8
            from ops.pass_runs where status = 'ok' group by repo_id
            """
        ).fetchall()
    )
    # each repository's latest finished run, whatever its outcome
    latest = {
        row[0]: row[1:]
        for row in conn.execute(
            """
            select distinct on (repo_id) repo_id, pass_name, status,
                extract(epoch from now() - finished_at)::float8, error
            from ops.pass_runs where finished_at is not null
            order by repo_id, finished_at desc, run_id desc
            """
        )
    }
    checks = []
    for repo_id, name in repos:
        age = ages.get(repo_id)
        detail = f"last successful pass run {_age(age)}"
        action = (
            f"is the extract schedule running? run `relored extract --repo {name}` "
            "and read its error"
        )
        level = OK
        if repo_id in latest and latest[repo_id][1] == "failed":
            pass_name, _, ago, error = latest[repo_id]
            detail += (
                f"; the latest run ({pass_name}, {_age(ago)}) failed: {_short(error or '?', 160)}"
            )
            level = WARN
            action = _unreachable_action(error, env or {}) or action
        if age is None or age > EXTRACT_FAIL_HOURS * 3600:
            level = FAIL
        elif age > EXTRACT_WARN_HOURS * 3600:
            level = WARN
        checks.append(Check(level, f"extract {name}", detail, "" if level == OK else action))
    return checks


def check_passes(conn: psycopg.Connection, repos, env=None) -> list[Check]:
    """A pass whose latest runs all failed having landed nothing is wedged: its mark stands
    still while the schedule keeps running it."""
    rows = conn.execute(
        """
        select repo_id, pass_name, status, rows_written, error,
            extract(epoch from now() - started_at)::float8 as started_ago,
            extract(epoch from now() - finished_at)::float8 as finished_ago
        from (
            select *, row_number() over (partition by repo_id, pass_name order by run_id desc)
                as recency
            from ops.pass_runs
        ) as runs
        where recency <= 20
        order by repo_id, pass_name, run_id desc
        """
    ).fetchall()
    marks = {
        (r[0], r[1]): r[2]
        for r in conn.execute(
            "select repo_id, pass_name, high_water::text, "
            "extract(epoch from now() - updated_at)::float8 from ops.checkpoints"
        )
    }
    runs: dict[tuple[int, str], list[tuple]] = {}
    for row in rows:
        runs.setdefault((row[0], row[1]), []).append(row[2:])
    checks = []
    for repo_id, name in repos:
        bad = []
        passes = sorted(p for (r, p) in runs if r == repo_id)
        for pass_name in passes:
            history = runs[(repo_id, pass_name)]
            latest_status, _, latest_error, started_ago, _ = history[0]
            if latest_status == "running":
                if started_ago > STUCK_RUNNING_HOURS * 3600:
                    bad.append(
                        Check(
                            WARN,
                            f"pass {name} {pass_name}",
                            f"a run started {_age(started_ago)} never finished",
                            "it was killed or hangs: check the extract job; the next run "
                            "resumes from the mark",
                        )
                    )
                history = history[1:]
                if not history:
                    continue
                latest_status, _, latest_error, _, _ = history[0]
            failed_empty = 0
            for status, written, *_ in history:
                if status != "failed" or written:
                    break
                failed_empty += 1
            mark = marks.get((repo_id, pass_name))
            where = f"; high-water stuck at {mark}" if mark else ""
            unreachable = _unreachable_action(latest_error, env or {})
            if failed_empty >= WEDGED_AFTER:
                bad.append(
                    Check(
                        FAIL,
                        f"pass {name} {pass_name}",
                        f"wedged: the last {failed_empty} runs failed landing nothing{where}; "
                        f"last error: {_short(latest_error)}",
                        unreachable
                        or "a page GitHub cannot serve, so rerunning will not help: fetch the "
                        f"threads with `relored extract sweep --repo {name}` and see "
                        "docs/operations.md (a wedged pass)",
                    )
                )
            elif latest_status == "failed":
                bad.append(
                    Check(
                        WARN,
                        f"pass {name} {pass_name}",
                        f"the last run failed: {_short(latest_error)}",
                        unreachable
                        or "the next scheduled run retries from the mark; FAIL if it fails again",
                    )
                )
        if bad:
            checks += bad
        elif passes:
            checks.append(
                Check(OK, f"passes {name}", f"{len(passes)} passes, latest runs ok or running")
            )
        else:
            checks.append(
                Check(
                    WARN,
                    f"passes {name}",
                    "no pass has run",
                    f"run `relored extract --repo {name}`",
                )
            )
    return checks
