"""Corpus-wide search over ``marts.documents``: strict conjunction first, widened only if empty.

The conjunction is what stops a pasted sentence matching everything, so it always runs
first and nothing that answered it can be widened away. When it is empty, the terms are
disjoined and ranked by coverage (how many of the caller's terms a document carries), with
density only breaking ties — and the page says it widened. The per-thread cap is a window
function over the ranked matches, so one chatty thread cannot fill the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.client import stamps
from relore.serve.envelope import one_line, quote

MAX_LIMIT = 10
PER_THREAD = 3
SNIPPET_CHARS = 400
MAX_QUERY_CHARS = 2000
MAX_TERMS = 32
TRUST_TIERS = ("authoritative", "reported", "machine")
_TERM_RE = re.compile(r"[^\W_][\w.\-/]*", re.UNICODE)


class BadQuery(ValueError):
    """A request we will not run, with what is wrong with it."""


@dataclass(frozen=True)
class SearchRequest:
    text: str
    repo: str | None = None
    limit: int = MAX_LIMIT
    trust: str | None = None
    state: str | None = None
    author: str | None = None
    terms: tuple[str, ...] = field(default=())

    def filters(self) -> dict:
        return {
            k: v
            for k, v in (
                ("repo", self.repo),
                ("trust", self.trust),
                ("state", self.state),
                ("author", self.author),
            )
            if v
        }


def parse_request(params) -> SearchRequest:
    text = params.get("q", "")
    if "\x00" in text:
        raise BadQuery("the query contains a NUL character")
    if len(text) > MAX_QUERY_CHARS:
        raise BadQuery(f"the query is {len(text)} characters; at most {MAX_QUERY_CHARS}")
    terms = tuple(dict.fromkeys(t.lower() for t in _TERM_RE.findall(text)))[:MAX_TERMS]
    if not terms:
        raise BadQuery("the query has no searchable words")
    try:
        limit = int(params.get("limit", MAX_LIMIT))
    except ValueError as exc:
        raise BadQuery("limit must be an integer") from exc
    if not 1 <= limit <= MAX_LIMIT:
        raise BadQuery(f"limit must be between 1 and {MAX_LIMIT}")
    trust = params.get("trust") or None
    if trust is not None and trust not in TRUST_TIERS:
        raise BadQuery(f"trust must be one of {', '.join(TRUST_TIERS)}")
    state = params.get("state") or None
    if state is not None and state not in ("open", "closed", "merged"):
        raise BadQuery("state must be open, closed or merged")
    return SearchRequest(
        text=text,
        repo=params.get("repo") or None,
        limit=limit,
        trust=trust,
        state=state,
        author=params.get("author") or None,
        terms=terms,
    )


# Shared by both passes: the admissible documents. Machine-authored text is only ever read
# when asked for by name (trust=machine); it is never a lowered floor.
_ADMISSIBLE = """
    not d.is_deleted
    and (%(repo)s::text is null or lower(d.repo) = lower(%(repo)s))
    and (%(author)s::text is null or lower(d.author_login) = lower(%(author)s))
    and (
        (%(trust)s::text is null and d.trust_tier <> 'machine')
        or d.trust_tier = %(trust)s
    )
    and (
        %(state)s::text is null
        or (%(state)s = 'merged' and t.is_merged)
        or (%(state)s <> 'merged' and t.state = %(state)s)
    )
"""

_SELECT_PAGE = """
, capped as (
    select
        s.*,
        count(*) over () as matches,
        row_number() over (
            partition by s.repo_id, s.thread_number order by s.score desc, s.document_id
        ) as thread_rank
    from scored as s
),
page as (
    select c.*, count(*) over () as total
    from capped as c
    where c.thread_rank <= %(per_thread)s
    order by c.score desc, c.created_at desc, c.document_id
    limit %(limit)s
)
select
    p.repo, p.thread_number as number, p.kind, p.state, p.is_merged, p.title, p.url,
    p.document_id, p.document_kind, p.author_login as author, p.trust_tier as trust,
    p.created_at, p.score, p.total, p.matches, p.matched_terms,
    left(
        ts_headline(
            'english', p.body_text, p.query,
            'MaxFragments=2, MaxWords=40, MinWords=12, StartSel="", StopSel="", '
            'FragmentDelimiter=" … "'
        ),
        %(snippet_chars)s
    ) as snippet
from page as p
order by p.score desc, p.created_at desc, p.document_id
"""

_STRICT = (
    """
with q as (select plainto_tsquery('english', %(text)s) as query),
scored as (
    select
        d.repo_id, d.repo, d.thread_number, d.document_id, d.document_kind, d.author_login,
        d.trust_tier, d.created_at, d.body_text, d.url, t.kind, t.state, t.is_merged, t.title,
        q.query,
        %(n_terms)s as matched_terms,
        ts_rank_cd(d.search_vector, q.query, 32) as score
    from marts.documents as d
    join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
    cross join q
    where d.search_vector @@ q.query and """
    + _ADMISSIBLE
    + ")"
    + _SELECT_PAGE
)

_WIDENED = (
    """
with term as (
    select plainto_tsquery('english', w) as query
    from unnest(%(terms)s::text[]) as w
    where numnode(plainto_tsquery('english', w)) > 0
),
q as (
    select (string_agg(term.query::text, ' | '))::tsquery as query, array_agg(term.query) as parts
    from term
),
scored as (
    select
        d.repo_id, d.repo, d.thread_number, d.document_id, d.document_kind, d.author_login,
        d.trust_tier, d.created_at, d.body_text, d.url, t.kind, t.state, t.is_merged, t.title,
        q.query,
        (select count(*) from unnest(q.parts) as part where d.search_vector @@ part)
            as matched_terms,
        -- coverage decides; density only breaks ties between equal coverage
        (select count(*) from unnest(q.parts) as part where d.search_vector @@ part)
            + ts_rank_cd(d.search_vector, q.query, 32) as score
    from marts.documents as d
    join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
    cross join q
    where q.query is not null and d.search_vector @@ q.query and """
    + _ADMISSIBLE
    + ")"
    + _SELECT_PAGE
)


def _hit(row: dict) -> dict:
    return {
        "repo": row["repo"],
        "number": row["number"],
        "kind": row["kind"],
        "state": "merged" if row["is_merged"] else row["state"],
        "title": one_line(row["title"]),
        "url": row["url"],
        "document_id": row["document_id"],
        "document_kind": row["document_kind"],
        "author": row["author"],
        "trust": row["trust"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
        "score": round(float(row["score"]), 4),
        "matched_terms": int(row["matched_terms"]),
        "snippet": quote(row["snippet"]),
    }


async def search(conn: AsyncConnection, request: SearchRequest) -> dict:
    params = {
        "text": " ".join(request.terms),
        "terms": list(request.terms),
        "n_terms": len(request.terms),
        "repo": request.repo,
        "author": request.author,
        "trust": request.trust,
        "state": request.state,
        "limit": request.limit,
        "per_thread": PER_THREAD,
        "snippet_chars": SNIPPET_CHARS,
    }
    widened = False
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(_STRICT, params)
        rows = await cur.fetchall()
        if not rows and len(request.terms) > 1:
            widened = True
            await cur.execute(_WIDENED, params)
            rows = await cur.fetchall()
    return {
        "query": request.text,
        "terms": list(request.terms),
        "filters": request.filters(),
        "widened": widened,
        "returned": len(rows),
        "total": int(rows[0]["total"]) if rows else 0,
        "matches": int(rows[0]["matches"]) if rows else 0,
        "per_thread_cap": PER_THREAD,
        "hits": [_hit(r) for r in rows],
    }
