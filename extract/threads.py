"""One thread, whole: the head, its comments, and for a pull request the pull object, its
changed files, review comments and reviews.

A thread fetch is authoritative for what the thread contains: an object of a type it re-read
that GitHub no longer returns gets a tombstone. Types it did not re-read are left alone, so a
fetch of an issue never prunes what another pass landed for a pull request.

Fetching (network) and landing (database) are separate so threads can be fetched
concurrently and still be landed one transaction per thread, in order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import psycopg

from relore.extract.github_client import GitHubClient, GitHubError, NotFound
from relore.extract.landing import RawObject, Repo, land
from relore.extract.payloads import exact_text

# GitHub lists at most this many files of a pull request, whatever it changed.
FILE_LIST_LIMIT = 3000
# Review comments carry a diff hunk each; pages of 100 are often never served.
REVIEW_COMMENTS_PER_PAGE = 50
# Object types a pull-request fetch re-reads, and so may prune.
ISSUE_TYPES = ("issue", "issue_comment")
PULL_TYPES = ("pull", "pull_file", "review_comment", "review", "review_graphql")


def pull_file_id(number: int, filename: str) -> int:
    """A changed file has no id of its own: a stable 60-bit one from number and path."""
    digest = hashlib.sha256(f"{number}\0{filename}".encode()).hexdigest()
    return int(digest[:15], 16)


def without_patch(entry: dict) -> dict:
    """A changed-file entry minus its ``patch``: source code never enters the database."""
    return {k: v for k, v in entry.items() if k != "patch"}


@dataclass
class FileWalk:
    files_listed: int
    changed_files: int | None

    @property
    def truncated(self) -> bool:
        if self.changed_files is not None and self.files_listed < self.changed_files:
            return True
        return self.files_listed >= FILE_LIST_LIMIT


@dataclass
class FetchedThread:
    number: int
    gone: str | None = None  # why the thread no longer exists here: deleted, transferred
    objects: list[RawObject] = field(default_factory=list)
    reread_types: tuple[str, ...] = ()
    file_walk: FileWalk | None = None
    updated_at: str | None = None
    oddity: str | None = None  # landed all the same, recorded in ops.quarantine (why)


def _all_items(client: GitHubClient, path: str, per_page: int) -> Iterator[dict]:
    for page in client.paginate(path, params={"per_page": per_page}):
        yield from page.items or []


# Where GitHub's 301 for a moved issue points (a transfer; a renamed repository's issue
# too, under its own repository id), and an issue's `repository_url` (.../repos/o/n).
_MOVED_TO = re.compile(r"/repositories/([0-9]+)/issues/([0-9]+)/?$")
_REPOSITORY = re.compile(r"/repos/([^/]+/[^/]+)/?$")


def _head(client: GitHubClient, repo: Repo, number: int, result: FetchedThread) -> dict | None:
    """The issue's payload, or None with ``result.gone`` said: deleted (404, 410), or
    transferred — only when GitHub says so: its redirect to another repository's issue, or
    a ``repository_url`` naming another repository. A payload that says neither (the field
    absent, null, not a repository URL) is this repository's: it lands, and
    ``result.oddity`` says what was odd (``land_thread`` records it in ``ops.quarantine``)."""
    try:
        response = client.request("GET", f"repos/{repo.full_name}/issues/{number}")
    except NotFound:
        result.gone = "deleted"
        return None
    except GitHubError as exc:
        if exc.status != 410:  # 410 Gone: GitHub's answer for a deleted issue
            raise
        result.gone = "deleted"
        return None
    head = response.json()
    if response.history:  # redirected: to the issue's new home, or ours renamed
        moved = _MOVED_TO.search(urlsplit(str(response.url)).path)
        if moved:
            if (int(moved.group(1)), int(moved.group(2))) != (repo.repo_id, number):
                result.gone = "transferred"
                return None
            return head  # this repository under another name: not a transfer
    named = head.get("repository_url")
    found = _REPOSITORY.search(urlsplit(named).path) if isinstance(named, str) else None
    if found is None:
        said = "absent" if "repository_url" not in head else f"{named!r}"[:80]
        result.oddity = (
            f"repository_url {said}: landed as {repo.full_name}'s, where it was asked for "
            "(GitHub did not redirect; a transfer is concluded only from a redirect or "
            "another repository named)"
        )
    elif found.group(1).lower() != repo.full_name.lower():
        result.gone = "transferred"
        return None
    return head


def fetch_thread(client: GitHubClient, repo: Repo, number: int) -> FetchedThread:
    base = f"repos/{repo.full_name}"
    result = FetchedThread(number)
    head = _head(client, repo, number, result)
    if head is None:
        return result
    result.updated_at = head.get("updated_at")
    objects = [RawObject("issue", int(head["id"]), number, head)]
    objects += [
        RawObject("issue_comment", int(c["id"]), number, c)
        for c in _all_items(client, f"{base}/issues/{number}/comments", 100)
    ]
    reread = ISSUE_TYPES
    if "pull_request" in head:
        pull = client.get_json(f"{base}/pulls/{number}")
        objects.append(RawObject("pull", int(pull["id"]), number, pull))
        files = [
            RawObject("pull_file", pull_file_id(number, f["filename"]), number, without_patch(f))
            for f in _all_items(client, f"{base}/pulls/{number}/files", 100)
        ]
        objects += files
        result.file_walk = FileWalk(len(files), pull.get("changed_files"))
        objects += [
            RawObject("review_comment", int(c["id"]), number, c)
            for c in _all_items(client, f"{base}/pulls/{number}/comments", REVIEW_COMMENTS_PER_PAGE)
        ]
        objects += [
            RawObject("review", int(r["id"]), number, r)
            for r in _all_items(client, f"{base}/pulls/{number}/reviews", 100)
        ]
        reread = ISSUE_TYPES + PULL_TYPES
    result.objects = objects
    result.reread_types = reread
    return result


def fetch_pull_details(client: GitHubClient, repo: Repo, number: int) -> FetchedThread:
    """The pull object and its changed files: what the bulk walks cannot give."""
    base = f"repos/{repo.full_name}"
    result = FetchedThread(number)
    try:
        pull = client.get_json(f"{base}/pulls/{number}")
    except NotFound:
        result.gone = "deleted"
        result.reread_types = ("pull", "pull_file")
        return result
    files = [
        RawObject("pull_file", pull_file_id(number, f["filename"]), number, without_patch(f))
        for f in _all_items(client, f"{base}/pulls/{number}/files", 100)
    ]
    result.objects = [RawObject("pull", int(pull["id"]), number, pull), *files]
    result.reread_types = ("pull", "pull_file")
    result.file_walk = FileWalk(len(files), pull.get("changed_files"))
    result.updated_at = pull.get("updated_at")
    return result


def fetch_head(client: GitHubClient, repo: Repo, number: int) -> FetchedThread:
    """Only the thread's head: is it still here, and has it changed (a sweep's question)."""
    result = FetchedThread(number)
    head = _head(client, repo, number, result)
    if head is None:
        return result
    result.objects = [RawObject("issue", int(head["id"]), number, head)]
    result.updated_at = head.get("updated_at")
    return result


def _present_ids(cur: psycopg.Cursor, repo: Repo, number: int, types: Iterable[str]):
    """(object_type, object_id) of every object of these types the thread holds now."""
    cur.execute(
        """
        select object_type, object_id from (
            select distinct on (object_type, object_id) object_type, object_id, is_deleted
            from raw.github_objects
            where repo_id = %s and thread_number = %s and object_type = any(%s)
            order by object_type, object_id, row_id desc
        ) as latest
        where not is_deleted
        """,
        (repo.repo_id, number, list(types)),
    )
    return cur.fetchall()


def _record_oddity(cur: psycopg.Cursor, repo: Repo, fetched: FetchedThread) -> None:
    """The head landed despite ``fetched.oddity``: its exact text and why, in
    ``ops.quarantine``, once per (object, reason, text)."""
    head = fetched.objects[0]
    body = exact_text(head.payload or {})
    cur.execute(
        """
        insert into ops.quarantine
            (repo_id, object_type, object_id, thread_number, url, reason, body)
        select %(repo_id)s, %(type)s, %(id)s, %(number)s, %(url)s, %(reason)s, %(body)s
        where not exists (
            select 1 from ops.quarantine
            where repo_id = %(repo_id)s and object_type = %(type)s and object_id = %(id)s
              and reason = %(reason)s and body = %(body)s
        )
        """,
        {
            "repo_id": repo.repo_id,
            "type": head.object_type,
            "id": head.object_id,
            "number": fetched.number,
            "url": (head.payload or {}).get("html_url") or (head.payload or {}).get("url"),
            "reason": fetched.oddity,
            "body": body,
        },
    )


def land_thread(cur: psycopg.Cursor, repo: Repo, pass_name: str, fetched: FetchedThread) -> int:
    """Land a fetched thread and prune what it no longer holds; inside the caller's
    transaction. Returns rows written (versions and tombstones)."""
    if fetched.gone:
        types = fetched.reread_types or ISSUE_TYPES + PULL_TYPES
        present = _present_ids(cur, repo, fetched.number, types)
        return land(
            cur, repo, pass_name, [RawObject(t, i, fetched.number, None) for t, i in present]
        )
    if fetched.oddity and fetched.objects:
        _record_oddity(cur, repo, fetched)
    kept = {(o.object_type, o.object_id) for o in fetched.objects}
    # a review re-read over REST is the same review as its GraphQL node
    kept |= {("review_graphql", i) for t, i in kept if t == "review"}
    present = _present_ids(cur, repo, fetched.number, fetched.reread_types)
    tombstones = [RawObject(t, i, fetched.number, None) for t, i in present if (t, i) not in kept]
    written = land(cur, repo, pass_name, fetched.objects + tombstones)
    if fetched.file_walk is not None:
        walk = fetched.file_walk
        cur.execute(
            """
            insert into ops.pull_file_walks
                (repo_id, number, files_listed, changed_files, truncated)
            values (%s, %s, %s, %s, %s)
            on conflict (repo_id, number) do update
                set files_listed = excluded.files_listed,
                    changed_files = excluded.changed_files,
                    truncated = excluded.truncated,
                    walked_at = clock_timestamp()
            """,
            (repo.repo_id, fetched.number, walk.files_listed, walk.changed_files, walk.truncated),
        )
    return written


@dataclass
class ThreadRunResult:
    pass_name: str
    threads: int = 0
    gone: int = 0
    written: int = 0
    failed_number: int | None = None
    error: str | None = None


def run_threads(
    conn: psycopg.Connection,
    client: GitHubClient,
    repo: Repo,
    pass_name: str,
    numbers: list[int],
    *,
    fetch: Callable[[GitHubClient, Repo, int], FetchedThread] = fetch_thread,
    workers: int = 2,
    on_committed: Callable[[psycopg.Cursor, FetchedThread], None] | None = None,
    progress: Callable[[ThreadRunResult, int], None] = lambda r, total: None,
) -> ThreadRunResult:
    """Fetch threads concurrently (at most ``workers`` at once: GitHub's secondary limits
    punish parallel bursts) and land them one transaction each, in the given order. The
    first failure stops the run: nothing after it is landed, so a mark advanced in
    ``on_committed`` never passes a thread that was not committed."""
    result = ThreadRunResult(pass_name)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(fetch, client, repo, n) for n in numbers]
        for number, future in zip(numbers, futures, strict=True):
            try:
                fetched = future.result()
            except Exception as exc:
                result.failed_number, result.error = number, str(exc)
                for later in futures:
                    later.cancel()
                break
            with conn.transaction(), conn.cursor() as cur:
                result.written += land_thread(cur, repo, pass_name, fetched)
                if on_committed is not None:
                    on_committed(cur, fetched)
            result.threads += 1
            result.gone += fetched.gone is not None
            progress(result, len(numbers))
    return result
