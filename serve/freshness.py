"""``status``'s freshness: each repository's place in the hourly loop (``relored cycle``) and
the token's budget the cycle recorded, read from the marts' views over ops
(``marts.repo_freshness``, ``marts.token_budget``): whether a repository is behind, and why,
is derived there, never here."""

from __future__ import annotations

from relore.contract import stamps


def _age(value) -> str | None:
    return stamps.age(value) if value is not None else None


# A repository the status views list that ops.repos does not (landed without the extractor):
# nothing is known of its loop.
UNKNOWN = {
    "behind": None,
    "why": None,
    "behind_after_s": None,
    "last_poll_at": None,
    "last_poll_age": None,
    "last_backfill_at": None,
    "last_done_at": None,
    "last_done_age": None,
    "backfill": None,
    "latest": None,
}


async def by_repo(cur, repo_id: int | None) -> dict[int, dict]:
    """``{repo_id: freshness}`` of every repository, or of the one named."""
    await cur.execute(
        """
        select * from marts.repo_freshness
        where %(repo_id)s::bigint is null or repo_id = %(repo_id)s
        """,
        {"repo_id": repo_id},
    )
    return {row["repo_id"]: _freshness(row) for row in await cur.fetchall()}


def _freshness(row: dict) -> dict:
    latest = None
    if row["latest_cycle_id"] is not None:
        latest = {
            "cycle": row["latest_cycle_id"],
            "role": row["latest_role"],
            "outcome": row["latest_outcome"],
            "started_at": stamps.iso(row["latest_started_at"]),
            "finished_at": stamps.iso(row["latest_finished_at"]),
            "reason": row["latest_reason"],
        }
    return {
        "behind": row["is_behind"],
        "why": row["behind_reason"],
        "behind_after_s": int(row["behind_after"].total_seconds()),
        "last_poll_at": stamps.iso(row["last_poll_at"]),
        "last_poll_age": _age(row["last_poll_at"]),
        "last_backfill_at": stamps.iso(row["last_backfill_at"]),
        "last_done_at": stamps.iso(row["last_done_at"]),
        "last_done_age": _age(row["last_done_at"]),
        "backfill": {
            "complete": row["backfill_complete"],
            "passes_done": row["backfill_steps_done"],
            "passes": row["backfill_steps"],
            "next_pass": row["backfill_step"],
            "high_water": stamps.iso(row["backfill_high_water"]),
        },
        "latest": latest,
    }


async def budget(cur) -> dict:
    """The token's core budget as the latest cycle recorded it; ``recorded`` false before
    the first cycle."""
    await cur.execute("select * from marts.token_budget")
    row = await cur.fetchone()
    if row is None:
        return {"recorded": False}
    return {
        "recorded": True,
        "limit": row["budget_limit"],
        "remaining": row["budget_remaining"],
        "reset_at": stamps.iso(row["budget_reset"]),
        "reset_passed": row["reset_passed"],
        "recorded_at": stamps.iso(row["recorded_at"]),
        "recorded_age": _age(row["recorded_at"]),
        "cycle": row["cycle_id"],
    }
