"""Pass checkpoints (high-water marks) and the record of each pass run, in ``ops``."""

from __future__ import annotations

from datetime import datetime

import psycopg


def high_water(conn: psycopg.Connection, repo_id: int, pass_name: str) -> datetime | None:
    row = conn.execute(
        "select high_water from ops.checkpoints where repo_id = %s and pass_name = %s",
        (repo_id, pass_name),
    ).fetchone()
    return row[0] if row else None


def advance(cur: psycopg.Cursor, repo_id: int, pass_name: str, mark: datetime) -> None:
    """Move the mark forward (never back), inside the transaction that committed the rows
    it covers, so a mark can never run ahead of what was landed."""
    cur.execute(
        """
        insert into ops.checkpoints (repo_id, pass_name, high_water)
        values (%s, %s, %s)
        on conflict (repo_id, pass_name) do update
            set high_water = greatest(ops.checkpoints.high_water, excluded.high_water),
                updated_at = clock_timestamp()
        """,
        (repo_id, pass_name, mark),
    )


def start_run(conn: psycopg.Connection, repo_id: int, pass_name: str) -> int:
    with conn.transaction():
        row = conn.execute(
            "insert into ops.pass_runs (repo_id, pass_name) values (%s, %s) returning run_id",
            (repo_id, pass_name),
        ).fetchone()
    assert row is not None
    return row[0]


def finish_run(
    conn: psycopg.Connection,
    repo_id: int,
    run_id: int,
    *,
    status: str,
    requests: int,
    rows_seen: int,
    rows_written: int,
    error: str | None = None,
) -> None:
    with conn.transaction():
        conn.execute(
            """
            update ops.pass_runs
            set finished_at = clock_timestamp(), status = %s, requests = %s,
                rows_seen = %s, rows_written = %s, error = %s
            where repo_id = %s and run_id = %s
            """,
            (status, requests, rows_seen, rows_written, error, repo_id, run_id),
        )
