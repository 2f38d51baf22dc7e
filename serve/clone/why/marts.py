"""What the marts say about the commits ``why`` found: which pull request carried each, the
file's other names, and the review comments anchored near the line.

A connection is borrowed per query (:class:`Marts`): a request never holds one of the
pool's few connections while git walks history.
"""

from __future__ import annotations

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from relore.contract import stamps
from relore.contract.envelope import one_line
from relore.serve import repos
from relore.serve.clone.why.history import Commit, subject_number
from relore.serve.thread import WHOLE_COMMENT, comment_row

NEAR_LINES = 10
COMMENTS_CAP = 5
COMMENT_CHARS = 400
# the sources in marts.thread_commits that say "this pull request carried the commit", best
# first; prose mentions a sha without carrying it
CARRYING = ("merge_commit", "head", "subject", "review_anchor")

_ALIASES = """
select distinct a.path
from marts.relore_path_aliases(%(repo_id)s::bigint, %(paths)s::text[]) as a (path)
"""

_CARRIED = """
select c.sha, c.thread_number as number, c.source
from marts.thread_commits as c
join marts.threads as t on t.repo_id = c.repo_id and t.number = c.thread_number
where t.repo_id = %(repo_id)s and t.kind = 'pr' and not t.is_deleted
  and c.sha = any(%(shas)s) and c.source in ('merge_commit', 'head', 'review_anchor')
"""

_PULLS = """
select t.number, t.title, t.state, t.merged_at, t.created_at, t.url,
       t.author_login, t.opening_post_trust
from marts.threads as t
where t.repo_id = %(repo_id)s and t.kind = 'pr' and not t.is_deleted
  and t.number = any(%(numbers)s)
"""

_REVIEW_COMMENTS = (
    """
select"""
    + WHOLE_COMMENT
    + """
from marts.documents as d
where d.repo_id = %(repo_id)s and d.thread_number = %(number)s
  and d.document_kind = 'review_comment' and not d.is_deleted
  and d.path = any(%(paths)s)
group by d.source_document_id
"""
)


class Marts:
    """The marts, a connection borrowed per query: a request never holds one of the pool's
    few connections while git walks history."""

    def __init__(self, pool: AsyncConnectionPool):
        self.pool = pool

    async def repo_id(self, name: str) -> int | None:
        """The repository's id by :func:`relore.serve.repos.find`, or None: ``why`` answers
        from the clone alone for a repository the index does not hold."""
        async with self.pool.connection() as conn:
            return await repos.find(conn, name)

    async def rows(self, sql: str, params: dict) -> list[dict]:
        async with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(sql, params)
            return await cur.fetchall()


async def aliases(marts: Marts, repo_id: int | None, paths: list[str]) -> list[str]:
    if repo_id is None:  # not indexed: no other names known (null would be every repo's)
        return sorted({p for p in paths if p is not None})
    rows = await marts.rows(_ALIASES, {"repo_id": repo_id, "paths": paths})
    return sorted(r["path"] for r in rows)


async def map_commits(marts: Marts, repo_id: int, commits: list[Commit]) -> dict[str, dict]:
    """sha -> the pull request that carried it, with how we know (``via``)."""
    shas = sorted({c.sha for c in commits})
    if not shas:
        return {}
    by_sha: dict[str, list[tuple[str, int]]] = {}
    for row in await marts.rows(_CARRIED, {"repo_id": repo_id, "shas": shas}):
        by_sha.setdefault(row["sha"], []).append((row["source"], row["number"]))
    subjects = {c.sha: subject_number(c.subject) for c in commits}
    numbers = sorted(
        {n for pairs in by_sha.values() for _, n in pairs}
        | {n for n in subjects.values() if n is not None}
    )
    if not numbers:
        return {}
    pulls = {
        row["number"]: row
        for row in await marts.rows(_PULLS, {"repo_id": repo_id, "numbers": numbers})
    }
    mapped = {}
    for sha in shas:
        options = list(by_sha.get(sha, []))
        if subjects.get(sha) is not None:
            options.append(("subject", subjects[sha]))
        options = [(s, n) for s, n in options if n in pulls]
        if not options:
            continue
        source, number = min(options, key=lambda item: CARRYING.index(item[0]))
        mapped[sha] = {**_pull(pulls[number]), "via": source}
    return mapped


def _pull(row: dict) -> dict:
    return {
        "number": row["number"],
        "title": one_line(row["title"]),
        "state": row["state"],
        "author": row["author_login"],
        "trust": row["opening_post_trust"],
        "url": row["url"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
        **({"merged_date": stamps.date(row["merged_at"])} if row.get("merged_at") else {}),
    }


def short_pull(pull: dict | None) -> dict | None:
    if pull is None:
        return None
    keep = ("number", "title", "state", "url", "via")
    return {k: pull[k] for k in keep if k in pull}


async def review_comments(
    marts: Marts, repo_id: int, number: int, paths: list[str], lines: set[int]
) -> dict:
    rows = await marts.rows(
        _REVIEW_COMMENTS, {"repo_id": repo_id, "number": number, "paths": paths}
    )
    near = []
    for row in rows:
        anchors = {a for a in (row["line"], row["original_line"]) if a is not None}
        if not anchors:
            continue
        distance = min(abs(a - wanted) for a in anchors for wanted in lines)
        if distance <= NEAR_LINES:
            near.append((distance, row))
    near.sort(key=lambda item: (item[0], item[1]["created_at"], item[1]["id"]))
    chosen = near[:COMMENTS_CAP]
    comments = []
    for distance, row in chosen:
        comments.append(
            {
                **comment_row(row, chars=COMMENT_CHARS),
                "path": row["path"],
                "line": row["line"] if row["line"] is not None else row["original_line"],
                "distance": distance,
            }
        )
    return {
        "window": NEAR_LINES,
        "returned": len(comments),
        "total": len(near),
        "on_file": len(rows),
        "comments": comments,
    }
