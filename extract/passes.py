"""Extract passes: each walks one GitHub listing from its high-water mark into ``raw``.

A page is landed and the pass's mark advanced in one transaction, so a pass killed at any
point resumes from the last committed page and loses nothing; ``since`` is inclusive, so the
items sharing the mark's second are read again and the hash dedupe makes that free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import httpx
import psycopg

from relore.extract import checkpoints
from relore.extract.github_client import GitHubClient, GitHubError
from relore.extract.landing import RawObject, Repo, land

Progress = Callable[[str], None]


@dataclass
class PassResult:
    pass_name: str
    pages: int = 0
    seen: int = 0
    written: int = 0
    high_water: datetime | None = None


@dataclass(frozen=True)
class Listing:
    """One bulk walk: where it lives, what it lands, and how an item names its thread."""

    pass_name: str
    path: str
    object_type: Callable[[dict], str]
    thread_number: Callable[[dict], int]
    params: tuple[tuple[str, str], ...] = ()


def _issue_number(item: dict) -> int:
    return int(item["number"])


def _comment_thread(item: dict) -> int:
    return int(item["issue_url"].rstrip("/").rsplit("/", 1)[-1])


def _review_comment_thread(item: dict) -> int:
    return int(item["pull_request_url"].rstrip("/").rsplit("/", 1)[-1])


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def listings(full_name: str) -> tuple[Listing, ...]:
    return (
        Listing(
            "issues",
            f"repos/{full_name}/issues",
            lambda _: "issue",
            _issue_number,
            params=(("state", "all"),),  # the default is open only
        ),
        Listing(
            "issue_comments",
            f"repos/{full_name}/issues/comments",
            lambda _: "issue_comment",
            _comment_thread,
        ),
        Listing(
            "review_comments",
            f"repos/{full_name}/pulls/comments",
            lambda _: "review_comment",
            _review_comment_thread,
            # each item carries a diff hunk: pages of 100 are often never served
            params=(("per_page", "50"),),
        ),
    )


def resolve_repo(conn: psycopg.Connection, client: GitHubClient, full_name: str) -> Repo:
    """Look the repository up (following a rename), land its payload, record it in ops.

    Asked by ETag once known under this name: an unchanged repository answers 304, which
    costs no rate limit (an idle poll's only other request)."""
    url = f"repos/{full_name}"
    known = conn.execute(
        "select repo_id, full_name from ops.repos where lower(full_name) = lower(%s) "
        "order by last_seen_at desc limit 1",
        (full_name,),
    ).fetchone()
    etag = stored_etag(conn, Repo(known[0], known[1]), url) if known else None
    response = client.request("GET", url, etag=etag)
    if response.status_code == 304 and known:
        conn.execute(
            "update ops.repos set last_seen_at = clock_timestamp() where repo_id = %s",
            (known[0],),
        )
        return Repo(repo_id=known[0], full_name=known[1])
    payload = response.json()
    repo = Repo(repo_id=int(payload["id"]), full_name=payload["full_name"])
    with conn.transaction(), conn.cursor() as cur:
        land(cur, repo, "repository", [RawObject("repository", repo.repo_id, None, payload)])
        if response.headers.get("etag"):
            store_etag(cur, repo, url, response.headers["etag"])
        cur.execute(
            """
            insert into ops.repos (repo_id, full_name, owner_login, owner_type)
            values (%s, %s, %s, %s)
            on conflict (repo_id) do update
                set full_name = excluded.full_name, owner_login = excluded.owner_login,
                    owner_type = excluded.owner_type, last_seen_at = clock_timestamp()
            """,
            (repo.repo_id, repo.full_name, payload["owner"]["login"], payload["owner"]["type"]),
        )
    return repo


def run_listing(
    conn: psycopg.Connection,
    client: GitHubClient,
    repo: Repo,
    listing: Listing,
    progress: Progress = lambda _: None,
) -> PassResult:
    """Walk a listing sorted by ``updated_at`` ascending from the pass's mark.

    When a walk ends having moved the mark, it is started again from the new mark: GitHub
    stops some listings at a fixed item count whatever ``since`` says, and a walk that
    merely reached the end comes back with nothing newer, which ends the pass.
    """
    result = PassResult(listing.pass_name)
    result.high_water = checkpoints.high_water(conn, repo.repo_id, listing.pass_name)
    with checkpoints.recorded_run(
        conn, repo.repo_id, listing.pass_name, client.stats, lambda: (result.seen, result.written)
    ):
        while True:
            start_mark = result.high_water
            params = {
                "sort": "updated",
                "direction": "asc",
                "per_page": 100,
                **dict(listing.params),
            }
            params["per_page"] = int(params["per_page"])
            if start_mark is not None:
                params["since"] = start_mark.strftime("%Y-%m-%dT%H:%M:%SZ")
            # the ETag's key: the first page relative to the configured API
            first_url = str(httpx.URL(listing.path.lstrip("/"), params=params))
            etag = stored_etag(conn, repo, first_url)
            for number, page in enumerate(
                _pages_until_refused(client, listing.path, params, etag), 1
            ):
                items = page.items or []
                # Only a first page that is the whole listing may answer for it by ETag: a
                # later page can change while the first stays the same.
                whole = (
                    number == 1
                    and page.status == 200
                    and page.next_url is None
                    and len(items) < params["per_page"]
                )
                _land_page(
                    conn, repo, listing, items, result, (first_url, page.etag) if whole else None
                )
                result.pages += 1
                progress(
                    f"{listing.pass_name}: page {result.pages}, {result.seen} seen, "
                    f"{result.written} written"
                )
            if result.high_water is None or result.high_water == start_mark:
                break
    return result


def _pages_until_refused(client: GitHubClient, path: str, params: dict, etag: str | None):
    """The walk's pages; a page-numbered ``next`` that GitHub refuses with 422 ("not
    supported for large datasets") ends the walk like a cap does, and the pass goes on
    from its mark. A refused first page is our own request, and stays an error."""
    pages = client.paginate(path, params, etag)
    yield next(pages)
    try:
        yield from pages
    except GitHubError as exc:
        if exc.status != 422:
            raise


def stored_etag(conn: psycopg.Connection, repo: Repo, url: str) -> str | None:
    """The ETag kept for ``url``, a path and query relative to the configured API (an older
    release keyed absolute URLs: those are never matched again, and never followed)."""
    row = conn.execute(
        "select etag from ops.etags where repo_id = %s and url = %s", (repo.repo_id, url)
    ).fetchone()
    return row[0] if row else None


def store_etag(
    cur: psycopg.Cursor, repo: Repo, url: str, etag: str, next_url: str | None = None
) -> None:
    cur.execute(
        """
        insert into ops.etags (repo_id, url, etag, next_url) values (%s, %s, %s, %s)
        on conflict (repo_id, url) do update
            set etag = excluded.etag, next_url = excluded.next_url,
                updated_at = clock_timestamp()
        """,
        (repo.repo_id, url, etag, next_url),
    )


def _land_page(
    conn: psycopg.Connection,
    repo: Repo,
    listing: Listing,
    items: list,
    result: PassResult,
    etag: tuple[str, str | None] | None = None,
) -> None:
    objects = [
        RawObject(listing.object_type(item), int(item["id"]), listing.thread_number(item), item)
        for item in items
    ]
    with conn.transaction(), conn.cursor() as cur:
        result.written += land(cur, repo, listing.pass_name, objects)
        if items:
            mark = max(_parse_time(item["updated_at"]) for item in items)
            checkpoints.advance(cur, repo.repo_id, listing.pass_name, mark)
            if result.high_water is None or mark > result.high_water:
                result.high_water = mark
        if etag is not None and etag[1]:
            store_etag(cur, repo, etag[0], etag[1])
    result.seen += len(items)
