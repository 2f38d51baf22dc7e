"""``relored doctor``'s schedule check: which repository is behind after the latest cycle of
``relored cycle``, and why (ops.repo_cycles, one row per repository per cycle)."""

from __future__ import annotations

import psycopg

from relore.operate.doctor.check import OK, WARN, Check

_WHY = {
    "budget": "the token's budget ran out during its {role}; the next cycle resumes at its marks",
    "waiting": "its {role} waited: no budget was left above the reserve",
    "failed": "its {role} failed",
    "partial": "its {role} stopped part-way",
    "running": "its {role} never finished (killed?); the next cycle resumes at its marks",
}


def check(conn: psycopg.Connection) -> list[Check]:
    latest = conn.execute("select max(cycle_id) from ops.repo_cycles").fetchone()[0]
    if latest is None:
        return []  # `relored cycle` never ran: the extract checks say the rest
    rows = conn.execute(
        """
        select c.full_name, c.role, c.outcome, c.reason, c.budget_remaining, c.budget_limit,
            c.budget_reset, (
                select max(d.started_at) from ops.repo_cycles as d
                where d.repo_id = c.repo_id and d.outcome = 'done'
            )
        from ops.repo_cycles as c
        where c.cycle_id = %s order by c.full_name
        """,
        (latest,),
    ).fetchall()
    checks, remaining = [], None
    for name, role, outcome, reason, left, limit, reset, fresh in rows:
        remaining = (left, limit, reset) if left is not None else remaining
        if outcome == "done" and role == "poll":
            continue
        as_of = f"; fresh as of {fresh:%Y-%m-%d %H:%MZ}" if fresh else "; never complete"
        if outcome == "done":
            why = "its backfill finished this cycle; it is polled from the next"
        else:
            why = _WHY.get(outcome, outcome).format(role=role)
            if role == "backfill" and outcome in ("budget", "waiting"):
                why = "backfilling: " + why
        detail = why + (f" ({reason[:200]})" if reason and outcome == "failed" else "") + as_of
        level = OK if outcome == "done" else WARN
        action = (
            "" if level == OK else "the hourly cycle catches up; `relored cycle` shows each turn"
        )
        checks.append(Check(level, f"schedule {name}", detail, action))
    budget = ""
    if remaining is not None:
        left, limit, reset = remaining
        budget = f"; the token had {left:,} of {limit:,} requests left, resetting {reset:%H:%MZ}"
    behind = sum(c.level != OK for c in checks)
    checks.insert(
        0,
        Check(
            OK,
            "schedule",
            f"cycle {latest}: {len(rows)} repositories, {behind} behind{budget}",
        ),
    )
    return checks
