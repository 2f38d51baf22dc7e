"""``relored doctor``'s schedule check: which repository the hourly loop (``relored cycle``)
has left behind, and why (ops.repo_cycles, one row per repository per cycle; ops.pass_runs
for how far a backfill has got).

A repository is behind by the first of the rules ``marts.repo_freshness`` derives for
``relore status`` (tests/integration/test_status_freshness.py holds the two together): in no
cycle while cycles run; its backfill not complete; its latest turn ended ``budget``,
``waiting``, ``failed`` or ``partial``; nothing of it finished for longer than
``schedule.BEHIND_AFTER``. And the loop itself is behind when no cycle started for as long."""

from __future__ import annotations

import psycopg

from relore.extract.schedule import BEHIND_AFTER, BULK_STEPS
from relore.operate.doctor.check import OK, WARN, Check, _age

_WHY = {
    "budget": "the token's budget ran out during its {role}; the next cycle resumes at its marks",
    "waiting": "its {role} waited: no budget was left above the reserve",
    "failed": "its {role} failed",
    "partial": "its {role} stopped part-way",
    "running": "its {role} never finished (running now, or killed); the next cycle resumes at "
    "its marks",
}
STOPPED = ("budget", "waiting", "failed", "partial")

REPOS = """
select r.full_name, l.cycle_id, l.role, l.outcome, l.reason,
    extract(epoch from now() - (
        select max(d.finished_at) from ops.repo_cycles as d
        where d.repo_id = r.repo_id and d.outcome = 'done'
    ))::float8 as done_age_s,
    extract(epoch from now() - (
        select max(d.finished_at) from ops.repo_cycles as d
        where d.repo_id = r.repo_id and d.outcome = 'done' and d.role = 'poll'
    ))::float8 as poll_age_s,
    (
        select count(distinct p.pass_name) from ops.pass_runs as p
        where p.repo_id = r.repo_id and p.status = 'ok' and p.pass_name = any(%(steps)s)
    ) as steps_done
from ops.repos as r
left join lateral (
    select c.cycle_id, c.role, c.outcome, c.reason from ops.repo_cycles as c
    where c.repo_id = r.repo_id order by c.cycle_id desc limit 1
) as l on true
order by r.full_name
"""


def behind_reason(latest_outcome, in_a_cycle: bool, steps_done: int, done_age_s) -> str | None:
    """The first rule that holds (``marts.repo_freshness``'s ``behind_reason``), or None."""
    if not in_a_cycle:
        return "never_cycled"
    if steps_done < len(BULK_STEPS):
        return "backfilling"
    if latest_outcome in STOPPED:
        return latest_outcome
    if done_age_s is None or done_age_s > BEHIND_AFTER.total_seconds():
        return "stale"
    return None


def _detail(why: str, row) -> str:
    _, _, role, outcome, reason, done_age_s, poll_age_s, steps_done = row
    polled = f"; last poll finished {_age(poll_age_s)}" if poll_age_s is not None else ""
    if why == "never_cycled":
        return "in no cycle of `relored cycle`" + polled
    turn = _WHY.get(outcome, f"its {{role}} ended {outcome}").format(role=role)
    if why == "backfilling":
        said = f"backfilling: {turn}" if outcome != "done" else "backfilling"
        said += f" ({steps_done} of {len(BULK_STEPS)} passes complete)"
    elif why == "stale":
        minutes = int(BEHIND_AFTER.total_seconds() // 60)
        said = (
            f"nothing of it finished for {_age(done_age_s).removesuffix(' ago')}, more than "
            f"{minutes} min"
            if done_age_s is not None
            else "no turn of it ever finished"
        ) + (f" ({turn})" if outcome != "done" else "")
    else:
        said = turn
    return (
        said
        + (f" ({reason[:200]})" if reason and outcome == "failed" else "")
        + ("" if why == "stale" else polled)
    )


_ACTION = {
    "never_cycled": "add it to the loop's repositories (RELORE_REPOS), or run "
    "`relored cycle --repo {name}`",
    "stale": "check the loop runs hourly (the timer, cron line or CronJob); "
    "`relored cycle` by hand shows each turn",
}


def check(conn: psycopg.Connection) -> list[Check]:
    latest = conn.execute(
        "select cycle_id, min(started_at), extract(epoch from now() - min(started_at))::float8 "
        "from ops.repo_cycles where cycle_id = (select max(cycle_id) from ops.repo_cycles) "
        "group by cycle_id"
    ).fetchone()
    if latest is None:
        return []  # `relored cycle` never ran: the extract checks say the rest
    cycle_id, started_at, cycle_age_s = latest
    rows = conn.execute(REPOS, {"steps": list(BULK_STEPS)}).fetchall()
    checks = []
    for row in rows:
        name, cycle, role, outcome = row[:4]
        why = behind_reason(outcome, cycle is not None, row[7], row[5])
        if why is not None:
            action = _ACTION.get(
                why, "the hourly cycle catches up; `relored cycle` shows each turn"
            )
            checks.append(
                Check(WARN, f"schedule {name}", _detail(why, row), action.format(name=name))
            )
        elif cycle == cycle_id and role == "backfill" and outcome == "done":
            detail = "its backfill finished this cycle; it is polled from the next"
            checks.append(Check(OK, f"schedule {name}", detail))
    behind = sum(c.level != OK for c in checks)
    summary = (
        f"cycle {cycle_id} started {_age(cycle_age_s)} ({started_at:%Y-%m-%d %H:%MZ}): "
        f"{len(rows)} repositories, {behind} behind{_budget(conn, cycle_id)}"
    )
    if cycle_age_s > BEHIND_AFTER.total_seconds():
        checks.insert(0, Check(WARN, "schedule", "no cycle since: " + summary, _ACTION["stale"]))
    else:
        checks.insert(0, Check(OK, "schedule", summary))
    return checks


def _budget(conn: psycopg.Connection, cycle_id: int) -> str:
    row = conn.execute(
        "select budget_remaining, budget_limit, budget_reset, budget_reset <= now() "
        "from ops.repo_cycles where cycle_id = %s and budget_remaining is not null "
        "order by coalesce(finished_at, started_at) desc limit 1",
        (cycle_id,),
    ).fetchone()
    if row is None:
        return ""
    left, limit, reset, passed = row
    of = f" of {limit:,}" if limit is not None else ""
    when = "" if reset is None else f", {'reset' if passed else 'resetting'} {reset:%H:%MZ}"
    return f"; the token had {left:,}{of} requests left{when}"
