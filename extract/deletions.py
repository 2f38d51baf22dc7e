"""Deleted comments: what no listing shows, noticed by count and re-read whole.

GitHub drops a deleted comment from every listing and lowers its thread's ``comments`` count
(a pull's ``review_comments`` for a review comment), but leaves the thread's ``updated_at``
where it was, so no ``since`` walk ever brings the change. Two checks find it:

- ``check`` (the last step of every poll) first asks for one more page of the issue listing,
  oldest first, by ETag (a 304 costs no rate limit), rotating through the repository a page
  per poll, so every head's count is read again in turn. Then a thread whose latest head or
  pull, as landed, counts fewer comments than relore holds live is re-read whole
  (``threads.fetch_thread``), which tombstones what GitHub no longer returns. Only threads
  whose head or pull landed since the previous check are compared.
- ``refresh_counts`` (the sweep) brings the counts up to date first: one walk of the issue
  listing (100 threads a request) lands every head again (an unchanged one writes nothing),
  each pull object is asked for with its ETag (a 304 costs no rate limit), and a live thread
  the listing no longer shows is looked up on its own (deleted or transferred). Then every
  thread is compared.

A count GitHub keeps differently from its listing would make a thread look short for ever:
``ops.deletion_checks`` remembers the head and pull versions each re-read answered, so such a
thread is re-read once per new version, never on every poll.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import psycopg

from relore.extract import passes, threads
from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.landing import RawObject, Repo, land, last_row_id, live_heads

PASS_NAME = "deletions"
ROTATION = "deletions:rotation"
LISTING_PARAMS = {"state": "all", "sort": "created", "direction": "asc", "per_page": 100}


@dataclass
class CheckResult:
    compared: int = 0
    suspects: list[int] = field(default_factory=list)
    reread: int = 0
    written: int = 0
    gone: int = 0


def _watermark(conn: psycopg.Connection, repo: Repo) -> int:
    row = conn.execute(
        "select cursor from ops.checkpoints where repo_id = %s and pass_name = %s",
        (repo.repo_id, PASS_NAME),
    ).fetchone()
    return int(row[0]) if row and row[0] else 0


def _changed_threads(conn: psycopg.Connection, repo: Repo, after_row_id: int) -> list[int]:
    """Threads whose head or pull landed a version after ``after_row_id``."""
    rows = conn.execute(
        """
        select distinct thread_number from raw.github_objects
        where repo_id = %s and row_id > %s and object_type in ('issue', 'pull')
            and thread_number is not null
        """,
        (repo.repo_id, after_row_id),
    ).fetchall()
    return sorted(r[0] for r in rows)


def suspects(conn: psycopg.Connection, repo: Repo, numbers: list[int] | None) -> list[int]:
    """Threads (among ``numbers``; all when None) holding more live comments or review
    comments than their latest head or pull counts, not yet re-read at these versions."""
    rows = conn.execute(
        """
        with latest as (
            select distinct on (object_type, object_id)
                object_type, thread_number, row_id, payload, is_deleted
            from raw.github_objects
            where repo_id = %(repo)s
                and object_type in ('issue', 'pull', 'issue_comment', 'review_comment')
                and (%(numbers)s::integer[] is null or thread_number = any(%(numbers)s))
            order by object_type, object_id, row_id desc
        ),

        live as (
            select * from latest where not is_deleted
        ),

        per_thread as (
            select
                thread_number,
                max(row_id) filter (where object_type = 'issue') as head_row_id,
                max(row_id) filter (where object_type = 'pull') as pull_row_id,
                max((payload ->> 'comments')::integer)
                    filter (where object_type = 'issue') as counted_comments,
                max((payload ->> 'review_comments')::integer)
                    filter (where object_type = 'pull') as counted_review_comments,
                count(*) filter (where object_type = 'issue_comment') as live_comments,
                count(*) filter (where object_type = 'review_comment') as live_review_comments
            from live
            group by thread_number
        )

        select t.thread_number
        from per_thread as t
        left join ops.deletion_checks as d
            on d.repo_id = %(repo)s and d.thread_number = t.thread_number
        where t.head_row_id is not null
            and (
                t.live_comments > t.counted_comments
                or t.live_review_comments > t.counted_review_comments
            )
            and (
                d.thread_number is null
                or t.head_row_id > coalesce(d.head_row_id, 0)
                or coalesce(t.pull_row_id, 0) > coalesce(d.pull_row_id, 0)
            )
        order by t.thread_number
        """,
        {"repo": repo.repo_id, "numbers": numbers},
    ).fetchall()
    return [r[0] for r in rows]


def _record_check(cur: psycopg.Cursor, repo: Repo, number: int) -> None:
    cur.execute(
        """
        insert into ops.deletion_checks (repo_id, thread_number, head_row_id, pull_row_id)
        select %(repo)s, %(number)s,
            max(row_id) filter (where object_type = 'issue'),
            max(row_id) filter (where object_type = 'pull')
        from raw.github_objects
        where repo_id = %(repo)s and thread_number = %(number)s
            and object_type in ('issue', 'pull')
        on conflict (repo_id, thread_number) do update
            set head_row_id = excluded.head_row_id, pull_row_id = excluded.pull_row_id,
                checked_at = clock_timestamp()
        """,
        {"repo": repo.repo_id, "number": number},
    )


def _stamp(conn: psycopg.Connection, repo: Repo, pass_name: str, cursor: str) -> None:
    """One of the check's own marks: ``high_water`` is when it last ran (what status shows),
    ``cursor`` where it goes on (the newest raw row compared, the next page to read)."""
    with conn.transaction():
        conn.execute(
            """
            insert into ops.checkpoints (repo_id, pass_name, high_water, cursor)
            values (%s, %s, clock_timestamp(), %s)
            on conflict (repo_id, pass_name) do update
                set high_water = excluded.high_water, cursor = excluded.cursor,
                    updated_at = clock_timestamp()
            """,
            (repo.repo_id, pass_name, cursor),
        )


def check(
    conn: psycopg.Connection,
    client: GitHubClient,
    repo: Repo,
    *,
    everything: bool = False,
    rotation_pages: int = 1,
    workers: int = 2,
    progress: Callable[[str], None] = lambda _: None,
) -> CheckResult:
    """Re-read whole every thread that counts fewer comments than relore holds live.
    Compares the threads changed since the last check, or all of them (``everything``)."""
    result = CheckResult()
    if not everything:
        result.written += rotate(conn, client, repo, pages=rotation_pages)
    mark = 0 if everything else _watermark(conn, repo)
    numbers = None if mark == 0 else _changed_threads(conn, repo, mark)
    result.compared = -1 if numbers is None else len(numbers)
    if numbers != []:
        result.suspects = suspects(conn, repo, numbers)
    if result.suspects:
        run = threads.run_threads(
            conn,
            client,
            repo,
            PASS_NAME,
            result.suspects,
            workers=workers,
            on_committed=lambda cur, fetched: _record_check(cur, repo, fetched.number),
            progress=lambda r, total: progress(
                f"{PASS_NAME}: {r.threads}/{total} threads re-read, {r.written} written"
            ),
        )
        result.reread, result.gone = run.threads, run.gone
        result.written += run.written
        if run.error is not None:
            raise GitHubError(f"thread #{run.failed_number}: {run.error}", url="")
    _stamp(conn, repo, PASS_NAME, str(last_row_id(conn, repo)))
    return result


def rotate(conn: psycopg.Connection, client: GitHubClient, repo: Repo, pages: int = 1) -> int:
    """Read the next ``pages`` pages of the issue listing (oldest first, by ETag) and land
    their heads; the walk wraps to the first page after the last. Returns rows written."""
    written = 0
    row = conn.execute(
        "select cursor from ops.checkpoints where repo_id = %s and pass_name = %s",
        (repo.repo_id, ROTATION),
    ).fetchone()
    first = str(httpx.URL(f"repos/{repo.full_name}/issues", params=LISTING_PARAMS))
    # Where the walk goes on, relative to the configured API. A link stored for another
    # origin (an older release kept absolute ones; the API has moved since) is dropped and
    # the rotation starts over: it is never followed, and the token never goes there.
    url = client.relative_url(row[0]) if row and row[0] else None
    url = url or first
    for _ in range(pages):
        known = conn.execute(
            "select etag, next_url from ops.etags where repo_id = %s and url = %s",
            (repo.repo_id, url),
        ).fetchone()
        page = client.get_page(url, etag=known[0] if known else None)
        if page.status == 304:
            following = client.relative_url(known[1]) if known[1] else None
        else:
            following = client.relative_url(page.next_url) if page.next_url else None
            if page.next_url and following is None:
                raise GitHubError(
                    "the next page's link is not on the configured GitHub API; not followed",
                    url=page.next_url,
                )
            items = page.items or []
            objects = [RawObject("issue", int(i["id"]), int(i["number"]), i) for i in items]
            with conn.transaction(), conn.cursor() as cur:
                written += land(cur, repo, ROTATION, objects)
                if page.etag:
                    passes.store_etag(cur, repo, url, page.etag, following)
        url = following or first
        _stamp(conn, repo, ROTATION, url)
        if url == first:
            break
    return written


@dataclass
class RefreshResult:
    listed: int = 0
    written: int = 0
    pulls_asked: int = 0
    missing: list[int] = field(default_factory=list)


def refresh_counts(
    conn: psycopg.Connection,
    client: GitHubClient,
    repo: Repo,
    pass_name: str,
    progress: Callable[[str], None] = lambda _: None,
) -> RefreshResult:
    """Land every head and pull object GitHub shows now, so their counts are current.
    Returns the live threads the listing no longer shows (for a per-thread look-up)."""
    result = RefreshResult()
    live = {number: is_pr for number, is_pr, _ in live_heads(conn, repo)}
    seen: set[int] = set()
    walked_to_end = True
    pages = client.paginate(f"repos/{repo.full_name}/issues", dict(LISTING_PARAMS))
    while True:
        try:
            page = next(pages)
        except StopIteration:
            break
        except GitHubError as exc:
            if exc.status != 422 or not seen:  # 422: GitHub refuses pages this deep
                raise
            walked_to_end = False
            break
        items = page.items or []
        objects = [RawObject("issue", int(i["id"]), int(i["number"]), i) for i in items]
        with conn.transaction(), conn.cursor() as cur:
            result.written += land(cur, repo, pass_name, objects)
        seen.update(int(i["number"]) for i in items)
        result.listed += len(items)
        progress(f"{pass_name}: {result.listed} threads listed, {result.written} written")
    # Numbers grow with creation, so a walk cut short still answers for the numbers below
    # the last one it saw.
    ceiling = max(seen, default=0)
    result.missing = sorted(n for n in live if n not in seen and (walked_to_end or n < ceiling))
    for number in sorted(n for n, is_pr in live.items() if is_pr and n in seen):
        result.written += _refresh_pull(conn, client, repo, pass_name, number)
        result.pulls_asked += 1
        if result.pulls_asked % 100 == 0:
            progress(f"{pass_name}: {result.pulls_asked} pull objects asked")
    return result


def _refresh_pull(
    conn: psycopg.Connection, client: GitHubClient, repo: Repo, pass_name: str, number: int
) -> int:
    """The pull object, asked with its ETag: a 304 (nothing changed) is free."""
    url = f"repos/{repo.full_name}/pulls/{number}"  # relative: the ETag's key
    response = client.request("GET", url, etag=passes.stored_etag(conn, repo, url))
    if response.status_code == 304:
        return 0
    pull = response.json()
    with conn.transaction(), conn.cursor() as cur:
        written = land(cur, repo, pass_name, [RawObject("pull", int(pull["id"]), number, pull)])
        if response.headers.get("etag"):
            passes.store_etag(cur, repo, url, response.headers["etag"])
    return written
