"""One thread, read in capped views: a page, an outline, one comment, the opening post, the
changed files — and the pull requests in flight for an issue.

A thread is never returned whole in one page: comments are unbounded. Every view says
``returned`` and ``total``; a cut body says ``body_chars``; a focus orders and never empties
a page, and narrows an outline (widening rather than emptying).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.contract import stamps
from relore.contract.envelope import one_line, quote
from relore.contract.limits import THREAD_PAGE as PAGE
from relore.serve import excerpts, inputs, notices, repos
from relore.serve.errors import BadRequest
from relore.serve.terms import MAX_TERMS
from relore.serve.terms import TERM_RE as _TERM_RE

OUTLINE_ROWS = 100
OUTLINE_CHARS = 60
SNIPPET_CHARS = 400
# the opening post leading a thread's first page
OPENING_CHARS = 1200
FILES_CAP = 300


@dataclass(frozen=True)
class ThreadRequest:
    repo: str
    number: int
    mode: str = "page"
    after: str | None = None
    focus: str | None = None
    comment: str | None = None
    limit: int = PAGE


def parse_request(params) -> ThreadRequest:
    got = inputs.parse("thread", params)  # as contract/verbs declares it
    if got["mode"] == "comment" and not got["comment"]:
        raise BadRequest("mode=comment needs comment=ID")
    return ThreadRequest(
        got["repo"],
        got["number"],
        got["mode"],
        got["after"],
        got["focus"],
        got["comment"],
        got["limit"],
    )


def parse_inflight(params) -> ThreadRequest:
    """inflight names a thread and nothing else."""
    got = inputs.parse("inflight", params)
    return ThreadRequest(got["repo"], got["number"])


def _terms(text: str | None) -> list[str]:
    return list(dict.fromkeys(t.lower() for t in _TERM_RE.findall(text or "")))[:MAX_TERMS]


_HEAD = """
select t.repo, t.number, t.kind, t.state, t.title, t.url, t.author_login,
       t.opening_post_trust, t.created_at, t.updated_at, t.comment_count, t.changed_files,
       t.files_listed, t.files_truncated, t.is_deleted
from marts.threads as t
where t.repo_id = %(repo_id)s and t.number = %(number)s
"""

# One row per comment (a document's chunks folded together), in thread order, with how
# many of the focus terms it carries (0 without a focus).
# One comment whole from its chunks (documents are chunked; a comment is one source
# document): the select list over `d`, grouped by d.source_document_id.
WHOLE_COMMENT = """
        d.source_document_id as id,
        min(d.source_id) as source_id,
        min(d.document_kind) as kind,
        min(d.author_login) as author,
        min(d.trust_tier) as trust,
        min(d.created_at) as created_at,
        min(d.url) as url,
        min(d.path) as path,
        min(d.line) as line,
        min(d.original_line) as original_line,
        string_agg(d.body_text, E'\\n\\n' order by d.chunk_index) as body"""

_COMMENTS = (
    """
with q as (
    select array_agg(plainto_tsquery('english', w)) as parts
    from unnest(%(terms)s::text[]) as w
    where numnode(plainto_tsquery('english', w)) > 0
),
docs as (
    select d.*
    from marts.documents as d
    where d.repo_id = %(repo_id)s and d.thread_number = %(number)s
      and not d.is_deleted and d.document_kind <> 'opening_post'
),
comments as (
    select
"""
    + WHOLE_COMMENT
    + """,
        coalesce(max((
            select count(*) from unnest(q.parts) as part where d.search_vector @@ part
        )), 0) as matched
    from docs as d cross join q
    group by d.source_document_id
)
select c.*, row_number() over (order by c.created_at, c.id) as position
from comments as c
order by c.created_at, c.id
"""
)


def comment_row(row: dict, *, whole: bool = False, chars: int = SNIPPET_CHARS) -> dict:
    """One comment as every page shows it (cut to `chars` unless whole, marked as quoted)."""
    body = row["body"] or ""
    text, cut = (body, False) if whole else excerpts.cut(body, chars)
    item = {
        "id": row["id"],
        "kind": row["kind"],
        "author": row["author"],
        "trust": row["trust"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
        "url": row["url"],
        "text": quote(text),
    }
    if row.get("path"):
        item["path"] = row["path"]
        item["line"] = row["line"]
    if cut:
        item["body_chars"] = len(body)
    return item


def _ends_and_middle(rows: list[dict], n: int) -> list[dict]:
    """The first comments, the last ones, and an even spread of the middle, in order."""
    if len(rows) <= n:
        return rows
    head, tail = n // 3, n // 3
    middle_n = n - head - tail
    middle = rows[head : len(rows) - tail]
    step = len(middle) / middle_n
    picks = [middle[int(i * step + step / 2)] for i in range(middle_n)]
    return rows[:head] + picks + rows[len(rows) - tail :]


def thread_identity(row: dict) -> dict:
    """What names a thread on every page that lists one (a search hit, a thread's head):
    a row of ``marts.threads`` columns, its state as the mart derived it."""
    return {
        "repo": row["repo"],
        "number": row["number"],
        "kind": row["kind"],
        "state": row["state"],
        "title": one_line(row["title"]),
        "url": row["url"],
    }


def _head(row: dict) -> dict:
    return {
        **thread_identity(row),
        "author": row["author_login"],
        "trust": row["opening_post_trust"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
    }


async def _opening_post(cur, params: dict) -> str:
    await cur.execute(
        """
        select string_agg(d.body_text, E'\\n\\n' order by d.chunk_index) as body
        from marts.documents as d
        where d.repo_id = %(repo_id)s and d.thread_number = %(number)s
          and d.document_kind = 'opening_post' and not d.is_deleted
        """,
        params,
    )
    row = await cur.fetchone()
    return (row["body"] if row else None) or ""


@notices.stated(notices.thread)
async def thread(conn: AsyncConnection, request: ThreadRequest) -> dict | None:
    """The page, or None when the repository is indexed but holds no such thread (a
    repository the index holds nothing for is ``errors.NotIndexed``)."""
    params = {
        "repo_id": await repos.require(conn, request.repo),
        "number": request.number,
        "terms": _terms(request.focus),
    }
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(_HEAD, params)
        head = await cur.fetchone()
        if head is None:
            return None
        page: dict = {"thread": _head(head), "mode": request.mode}
        if request.mode == "full":
            body = await _opening_post(cur, params)
            page.update(opening_post=quote(body), body_chars=len(body), returned=1, total=1)
            return page
        if request.mode == "page" and not request.after:
            # the first page leads with what the thread is: its opening post, cut
            body = await _opening_post(cur, params)
            text, cut = excerpts.cut(body, OPENING_CHARS)
            page["opening_post"] = quote(text)
            if cut:
                page["opening_post_chars"] = len(body)
        if request.mode == "files":
            return await _files(cur, page, head, params)
        await cur.execute(_COMMENTS, params)
        rows = await cur.fetchall()
    page["total"] = len(rows)
    if request.mode == "comment":
        wanted = request.comment or ""
        match = [r for r in rows if r["id"] == wanted or str(r["source_id"]) == wanted]
        page["comments"] = [comment_row(r, whole=True) for r in match]
        page["returned"] = len(match)
        if not match:
            page["missing"] = f"no comment {wanted} in this thread"
        return page
    if request.mode == "outline":
        return _outline(page, rows, request)
    return _page(page, rows, request)


def _outline(page: dict, rows: list[dict], request: ThreadRequest) -> dict:
    chosen = rows
    if request.focus:
        matching = [r for r in rows if r["matched"] > 0]
        page["focus_matched"] = len(matching)
        if matching:
            chosen = matching  # narrowed; a focus matching nothing leaves the outline whole
        else:
            page["focus_widened"] = True
    capped = chosen[:OUTLINE_ROWS]
    page["outline"] = [
        {
            "id": r["id"],
            "author": r["author"],
            "trust": r["trust"],
            "date": stamps.date(r["created_at"]),
            "line": one_line(r["body"], OUTLINE_CHARS),  # fenced by the renderer
        }
        for r in capped
    ]
    page["returned"] = len(capped)
    page["shown_of"] = len(chosen)
    if len(chosen) > OUTLINE_ROWS:
        page["capped"] = f"outline capped at {OUTLINE_ROWS} of {len(chosen)} rows"
    return page


def _page(page: dict, rows: list[dict], request: ThreadRequest) -> dict:
    if request.after:
        position = next(
            (r["position"] for r in rows if request.after in (r["id"], str(r["source_id"]))),
            None,
        )
        if position is None:  # a cursor naming nothing is bad input, as GitHub's is (422)
            raise BadRequest(
                f"after={one_line(request.after, 80)} names no comment of this thread: give "
                "an id a page showed in [brackets] (or next_after)"
            )
        chosen = [r for r in rows if r["position"] > position][: request.limit]
        page["selection"] = "sequential"
    elif request.focus:
        # a focus orders and never empties: coverage first, then thread order
        ranked = sorted(rows, key=lambda r: (-r["matched"], r["position"]))[: request.limit]
        chosen = sorted(ranked, key=lambda r: r["position"])
        page["focus_matched"] = sum(1 for r in rows if r["matched"] > 0)
        page["selection"] = "focus"
    else:
        chosen = _ends_and_middle(rows, request.limit)
        page["selection"] = "ends and middle" if len(rows) > request.limit else "all"
        # the comments left out, and the --after id that reads them in order from the first gap
        gap = next(
            (a for a, b in itertools.pairwise(chosen) if b["position"] > a["position"] + 1),
            None,
        )
        if gap is not None:
            page["left_out"] = {"comments": len(rows) - len(chosen), "after": gap["id"]}
    page["comments"] = [comment_row(r) for r in chosen]
    page["returned"] = len(chosen)
    if chosen and chosen[-1]["position"] < len(rows):
        page["next_after"] = chosen[-1]["id"]
    return page


async def _files(cur, page: dict, head: dict, params: dict) -> dict:
    await cur.execute(
        """
        select f.path, f.change_type
        from marts.thread_files as f
        where f.repo_id = %(repo_id)s and f.thread_number = %(number)s
          and f.source = 'changed_file'
        order by f.path
        """,
        params,
    )
    rows = await cur.fetchall()
    page["files"] = [{"path": r["path"], "change": r["change_type"]} for r in rows[:FILES_CAP]]
    page["returned"] = len(page["files"])
    page["total"] = len(rows)
    page["changed_files"] = head["changed_files"]
    page["files_truncated"] = bool(head["files_truncated"])
    if head["files_truncated"]:
        page["missing"] = (
            f"GitHub lists at most 3,000 files; this PR changed {head['changed_files']}: "
            "a path not listed here may still have been changed"
        )
    return page


# How a claim stands, in the order an agent needs them: someone is on it, it was done, it was
# tried and rejected ("someone tried this; here is why it was not merged").
CLAIMS = ("open", "merged", "abandoned")
INFLIGHT_CAP = 20


def _claim(row: dict) -> str:
    if row["is_merged"]:
        return "merged"
    return "open" if row["state"] == "open" else "abandoned"


@notices.stated(notices.inflight)
async def inflight(conn: AsyncConnection, repo: str, number: int) -> dict | None:
    """Pull requests that claim to close an issue — open, then merged, then abandoned
    (closed unmerged) — capped at INFLIGHT_CAP with the total (``errors.NotIndexed`` for a
    repository the index holds nothing for)."""
    repo_id = await repos.require(conn, repo)
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(_HEAD, {"repo_id": repo_id, "number": number})
        head = await cur.fetchone()
        # A claim names its target by repo and number, so it answers for an issue the
        # index never fetched (a sample pass, a link to another repository) too.
        await cur.execute(
            """
            select distinct on (p.repo_id, p.number)
                   p.repo, p.number, p.state, p.is_merged, p.is_draft, p.title, p.url,
                   p.author_login, p.opening_post_trust, p.created_at, p.updated_at
            from marts.thread_links as l
            join marts.threads as p on p.repo_id = l.repo_id and p.number = l.thread_number
            where l.target_number = %(number)s
              and (
                  l.target_repo_id = %(repo_id)s
                  or l.target_repo = %(target_repo)s
                  or l.target_repo in (
                      select n.repo from marts.repository_names as n where n.repo_id = %(repo_id)s
                  )
              )
              and l.link_kind = 'closes' and p.kind = 'pr'
            order by p.repo_id, p.number
            """,
            # a link names its target by the lowercased name its author typed: the name asked
            # by (it resolved here; a house never extracted has no repository_names), a former
            # one GitHub redirects (marts.repository_names), or by repo_id once it is indexed
            {"target_repo": repo.lower(), "number": number, "repo_id": repo_id},
        )
        rows = await cur.fetchall()
    if head is None and not rows:
        return None
    rows.sort(key=lambda r: (CLAIMS.index(_claim(r)), -r["updated_at"].timestamp()))
    shown = rows[:INFLIGHT_CAP]
    return {
        "thread": _head(head) if head else {"repo": repo, "number": number, "indexed": False},
        "returned": len(shown),
        "total": len(rows),
        "claims": {claim: sum(_claim(r) == claim for r in rows) for claim in CLAIMS},
        "pulls": [
            {
                "repo": r["repo"],
                "number": r["number"],
                "claim": _claim(r),
                "state": "draft" if r["is_draft"] and _claim(r) == "open" else _claim(r),
                "title": one_line(r["title"]),
                "url": r["url"],
                "author": r["author_login"],
                "trust": r["opening_post_trust"],
                "date": stamps.date(r["updated_at"]),
                "age": stamps.age(r["updated_at"]),
            }
            for r in shown
        ],
    }
