"""The landing writer: payloads into ``raw.github_objects``, append-only with hash dedupe.

An unchanged payload writes no row; a changed one writes a new version; a deletion writes a
tombstone (null payload). Nothing is updated or deleted, so history is free and a re-run of
any pass is harmless.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.types.json import Jsonb

from relore.extract.payloads import exact_text, storable

TOMBSTONE_HASH = "tombstone"


@dataclass(frozen=True)
class RawObject:
    object_type: str
    object_id: int
    thread_number: int | None
    payload: dict | None  # None: a tombstone


@dataclass(frozen=True)
class Repo:
    repo_id: int
    full_name: str


def payload_hash(payload: dict) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _latest_hashes(
    cur: psycopg.Cursor, repo_id: int, objects: list[RawObject]
) -> dict[tuple[str, int], str]:
    types = [o.object_type for o in objects]
    ids = [o.object_id for o in objects]
    cur.execute(
        """
        select distinct on (g.object_type, g.object_id)
            g.object_type, g.object_id, g.payload_hash
        from raw.github_objects as g
        join unnest(%s::text[], %s::bigint[]) as k (object_type, object_id)
            on g.object_type = k.object_type and g.object_id = k.object_id
        where g.repo_id = %s
        order by g.object_type, g.object_id, g.row_id desc
        """,
        (types, ids, repo_id),
    )
    return {(t, i): h for t, i, h in cur.fetchall()}


def land(cur: psycopg.Cursor, repo: Repo, pass_name: str, objects: list[RawObject]) -> int:
    """Write the objects whose payload differs from their latest stored version.
    Runs inside the caller's transaction; returns the number of rows written."""
    if not objects:
        return 0
    # One writer per repository at a time, so "latest version" cannot change under us.
    cur.execute("select pg_advisory_xact_lock(%s)", (repo.repo_id,))
    latest = _latest_hashes(cur, repo.repo_id, objects)
    rows = []
    quarantined = []
    seen: set[tuple[str, int]] = set()
    for obj in objects:
        key = (obj.object_type, obj.object_id)
        if key in seen:  # the same object twice in one batch: the first wins
            continue
        seen.add(key)
        payload, problems = (None, []) if obj.payload is None else storable(obj.payload)
        digest = TOMBSTONE_HASH if payload is None else payload_hash(payload)
        if latest.get(key) == digest:
            continue
        if payload is None and key not in latest:
            continue  # never seen: nothing to tombstone
        if problems:
            quarantined.append(
                (
                    repo.repo_id,
                    obj.object_type,
                    obj.object_id,
                    obj.thread_number,
                    obj.payload.get("html_url") or obj.payload.get("url"),
                    "landed with U+FFFD in place of: " + ", ".join(problems),
                    exact_text(obj.payload),
                )
            )
        rows.append(
            (
                repo.repo_id,
                repo.full_name,
                obj.object_type,
                obj.object_id,
                obj.thread_number,
                None if payload is None else Jsonb(payload),
                digest,
                payload is None,
                pass_name,
            )
        )
    if quarantined:
        cur.executemany(
            """
            insert into ops.quarantine
                (repo_id, object_type, object_id, thread_number, url, reason, body)
            values (%s, %s, %s, %s, %s, %s, %s)
            """,
            quarantined,
        )
    if rows:
        cur.executemany(
            """
            insert into raw.github_objects
                (repo_id, repo, object_type, object_id, thread_number, payload,
                 payload_hash, is_deleted, pass_name)
            values (%s, %s, %s, %s, %s, %s, %s, %s, %s)
            """,
            rows,
        )
    return len(rows)


def last_row_id(conn: psycopg.Connection, repo: Repo) -> int:
    """The newest raw row landed for the repository (0 before the first)."""
    row = conn.execute(
        "select coalesce(max(row_id), 0) from raw.github_objects where repo_id = %s",
        (repo.repo_id,),
    ).fetchone()
    return int(row[0])


def live_heads(conn: psycopg.Connection, repo: Repo) -> list[tuple[int, bool, datetime | None]]:
    """Every thread relore holds live: (number, is it a pull request, its head's
    ``updated_at``), by number."""
    rows = conn.execute(
        """
        select thread_number, payload ? 'pull_request', (payload ->> 'updated_at')::timestamptz
        from (
            select distinct on (object_id) thread_number, payload, is_deleted
            from raw.github_objects
            where repo_id = %s and object_type = 'issue'
            order by object_id, row_id desc
        ) as latest
        where not is_deleted
        order by thread_number
        """,
        (repo.repo_id,),
    ).fetchall()
    return [(int(n), bool(is_pr), updated) for n, is_pr, updated in rows]
