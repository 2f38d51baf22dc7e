"""Pass checkpoints (high-water marks) and the record of each pass run, in ``ops``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

import psycopg

from relore.extract import budget


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


@contextmanager
def recorded_run(
    conn: psycopg.Connection,
    repo_id: int,
    pass_name: str,
    stats,
    counts: Callable[[], tuple[int, int]],
) -> Iterator[None]:
    """A pass's run in ``ops.pass_runs``: started on entry, finished however the block ends
    (``ok``; ``budget`` when the token's budget stopped it, its mark where the next cycle
    resumes; else ``failed`` with the error), with the requests it made and the rows
    ``counts()`` says it saw and wrote by then."""
    run_id = start_run(conn, repo_id, pass_name)
    requests_before = stats.requests
    status, error = "failed", None
    try:
        yield
        status = "ok"
    except Exception as exc:
        error = str(exc)[:2000]
        status = "budget" if budget.spent_in(exc) else "failed"
        raise
    finally:
        seen, written = counts()
        finish_run(
            conn,
            repo_id,
            run_id,
            status=status,
            requests=stats.requests - requests_before,
            rows_seen=seen,
            rows_written=written,
            error=error,
        )


def mark_and_done(
    conn: psycopg.Connection, repo_id: int, pass_name: str
) -> tuple[datetime | None, set[int]]:
    """The mark, and the threads already committed at exactly that second: a thread-level
    pass re-reads the mark's second (nothing sharing it is skipped) but not those."""
    row = conn.execute(
        "select high_water, cursor from ops.checkpoints where repo_id = %s and pass_name = %s",
        (repo_id, pass_name),
    ).fetchone()
    if not row:
        return None, set()
    done = set(json.loads(row[1])) if row[1] and row[1].startswith("[") else set()
    return row[0], done


def advance_threads(
    cur: psycopg.Cursor, repo_id: int, pass_name: str, mark: datetime, numbers: list[int]
) -> None:
    """Move the mark, remembering which threads were committed at the mark's second."""
    cur.execute(
        """
        insert into ops.checkpoints (repo_id, pass_name, high_water, cursor)
        values (%(r)s, %(p)s, %(m)s, %(c)s)
        on conflict (repo_id, pass_name) do update
            set cursor = case
                    when excluded.high_water > ops.checkpoints.high_water
                        or ops.checkpoints.high_water is null then excluded.cursor
                    when excluded.high_water = ops.checkpoints.high_water then (
                        select jsonb_agg(distinct n order by n)::text
                        from jsonb_array_elements(
                            coalesce(nullif(ops.checkpoints.cursor, ''), '[]')::jsonb
                            || excluded.cursor::jsonb
                        ) as n
                    )
                    else ops.checkpoints.cursor
                end,
                high_water = greatest(ops.checkpoints.high_water, excluded.high_water),
                updated_at = clock_timestamp()
        """,
        {"r": repo_id, "p": pass_name, "m": mark, "c": json.dumps(sorted(numbers))},
    )
