"""``status``: what the index holds, per repository, and how fresh the loop keeps it, read
from the marts' status views."""

from __future__ import annotations

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.contract import stamps
from relore.contract.version import __version__
from relore.serve import freshness
from relore.serve.lexical import store
from relore.serve.repos import require as require_repo
from relore.serve.semantic import nearest

# The deletion check's marks are times it ran, not high-water marks of a listing.
_DELETION_MARKS = ("deletions", "deletions:rotation")

# A standby more than this far behind its primary (or not streaming at all) is said to be.
REPLICA_BEHIND_S = 60.0

# Where the daemon reads: a primary, or a hot standby and how far behind it is. Caught up
# (everything received replayed, and a WAL receiver streaming) is no lag; otherwise the lag
# is the age of the last transaction replayed (pg_last_xact_replay_timestamp): an upper
# bound, and the only measure a standby has once its primary is unreachable. Every role may
# call these; pg_stat_wal_receiver shows the reader its receiver's pid and nothing more.
REPLICA = """
select
    pg_is_in_recovery() as standby,
    pg_last_xact_replay_timestamp() as last_replayed_at,
    exists (select from pg_stat_wal_receiver where pid is not null) as receiving,
    pg_last_wal_receive_lsn() is not distinct from pg_last_wal_replay_lsn() as replayed_all,
    extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 as age_s
"""


async def replica(cur) -> dict:
    """``{"standby": false}`` on a primary; on a hot standby, whether it streams, how far
    behind it is (``replay_lag_s``, null before it replayed anything), and ``behind``."""
    await cur.execute(REPLICA)
    row = await cur.fetchone()
    if not row["standby"]:
        return {"standby": False}
    if row["receiving"] and row["replayed_all"]:
        lag = 0.0
    else:
        lag = round(row["age_s"], 1) if row["age_s"] is not None else None
    return {
        "standby": True,
        "receiving": row["receiving"],
        "replay_lag_s": lag,
        "last_replayed_at": stamps.iso(row["last_replayed_at"]),
        "behind": not row["receiving"] or lag is None or lag > REPLICA_BEHIND_S,
    }


def _deletions_checked(marks: list[dict]) -> dict:
    """When the counts were last compared (every poll) and last walked in full (a sweep)."""
    at = {m["pass"]: m for m in marks if m["pass"] in _DELETION_MARKS}
    checked = at.get("deletions") or {}
    return {"checked_at": checked.get("high_water"), "age": checked.get("age")}


async def status(conn: AsyncConnection, repo: str | None = None) -> dict:
    """Every repository, or the one named (``errors.NotIndexed`` when the index holds
    nothing for it)."""
    repo_id = await require_repo(conn, repo) if repo else None
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute("show server_version")
        engine = (await cur.fetchone())["server_version"].split()[0]
        await cur.execute(
            """
            select * from marts.repo_status
            where %(repo_id)s::bigint is null or repo_id = %(repo_id)s
            order by repo
            """,
            {"repo_id": repo_id},
        )
        repos = await cur.fetchall()
        await cur.execute(
            "select repo_id, pass_name, high_water, updated_at from marts.pass_checkpoints"
        )
        marks: dict[int, list[dict]] = {}
        for row in await cur.fetchall():
            marks.setdefault(row["repo_id"], []).append(
                {
                    "pass": row["pass_name"],
                    "high_water": stamps.iso(row["high_water"]),
                    "age": stamps.age(row["high_water"]) if row["high_water"] else None,
                }
            )
        semantic = {r["repo_id"]: await nearest.state(cur, r["repo_id"]) for r in repos}
        fresh = await freshness.by_repo(cur, repo_id)
        budget = await freshness.budget(cur)
        where = await replica(cur)
    indexes = store.for_connection(conn)
    search_index = {r["repo_id"]: await indexes.state(conn, r["repo_id"]) for r in repos}
    return {
        "version": __version__,
        "engine": f"postgres {engine}",
        "replica": where,
        "budget": budget,
        "returned": len(repos),
        "total": len(repos),
        "repos": [
            {
                "repo": r["repo"],
                "threads": r["threads"],
                "issues": r["issues"],
                "prs": r["prs"],
                "documents": r["documents"],
                "trust": {
                    "authoritative": r["documents_authoritative"],
                    "reported": r["documents_reported"],
                    "machine": r["documents_machine"],
                },
                "last_loaded_at": stamps.iso(r["last_loaded_at"]),
                "last_built_at": stamps.iso(r["last_built_at"]),
                "orphan_comments": r["orphan_comments"],
                # every signal mart's rows (the list: macros/signal_marts.sql)
                "signals": r["signals"],
                "authority": {
                    "resolved": r["authority_logins"] > 0,
                    "logins": r["authority_logins"],
                    "with_write": r["authority_writers"],
                    "resolved_at": stamps.iso(r["authority_resolved_at"]),
                },
                "sample_floors": r["sample_floors"] or {},
                "passes": sorted(
                    (m for m in marks.get(r["repo_id"], []) if m["pass"] not in _DELETION_MARKS),
                    key=lambda m: m["pass"],
                ),
                "deletions": _deletions_checked(marks.get(r["repo_id"], [])),
                "search_index": search_index[r["repo_id"]],
                "semantic": semantic[r["repo_id"]],
                "freshness": fresh.get(r["repo_id"], freshness.UNKNOWN),
            }
            for r in repos
        ],
    }
