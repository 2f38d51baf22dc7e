"""Corpus-wide search over ``marts.documents``: strict conjunction first, then every document
carrying any of the words.

The conjunction is what stops a pasted sentence matching everything, so it always runs
first and nothing that answered it can be widened away. When it leaves the page short, the
page is filled by BM25 over the disjunction of the caller's lexemes (every document holding
any of them, ranked over the whole index), each hit saying how many of the terms it carries
and showing them — and the page says it widened. A long description or question shares a
third of its words with the thread that answers it, not half
(benchmarks/results/intent-slices.md, #36).
The per-thread cap applies to the ranked walk, so one chatty thread cannot fill the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.contract.limits import MAX_HITS as MAX_LIMIT
from relore.contract.limits import (
    MAX_QUERY_CHARS,
)
from relore.serve import across, excerpts, fused, inputs, notices, page_hits, ranked, repos
from relore.serve.errors import BadRequest
from relore.serve.ranked import PER_THREAD, SIGNALS
from relore.serve.semantic import fusion
from relore.serve.terms import MAX_TERMS
from relore.serve.terms import TERM_RE as _TERM_RE

# What a kind of question may be answered from (machine text only ever by name, trust=machine)
KIND_TRUST = {
    "failure": ("authoritative", "reported"),
    "rationale": ("authoritative",),
    "precedent": ("authoritative", "reported"),
}
PRECEDENT_LIMIT = 5


@dataclass(frozen=True)
class SearchRequest:
    text: str
    # one repository named (and no org): ranked in its own index
    repo: str | None = None
    # the repository's id, resolved once by search() (repos.require)
    repo_id: int | None = None
    # several named, an owner's, or (neither) every one held: ranked together
    repos: tuple[str, ...] = ()
    org: str | None = None
    # ...resolved once by search() (repos.scope): (repo_id, name) of each repository searched
    scope: tuple[tuple[int, str], ...] = ()
    limit: int = MAX_LIMIT
    trust: str | None = None
    state: str | None = None
    author: str | None = None
    kind: str | None = None
    since: str | None = None
    terms: tuple[str, ...] = field(default=())
    file: tuple[str, ...] = ()
    error: tuple[str, ...] = ()
    test: tuple[str, ...] = ()
    symbol: tuple[str, ...] = ()
    # set only when search lowers a kind's floor (see search()); --trust always wins
    floor: tuple[str, ...] = ()
    # set only for a traceback's signal legs: fill from documents holding this many words
    least: int | None = None
    # set only when the query was a pasted traceback over MAX_QUERY_CHARS: its length before
    # excerpts.cut reduced it to its lead, its error line and the deepest frames
    pasted_chars: int | None = None

    @property
    def repo_ids(self) -> list[int]:
        """The repositories searched (resolved): the one named, else the scope."""
        return [self.repo_id] if self.repo_id is not None else [r for r, _ in self.scope]

    @property
    def has_signals(self) -> bool:
        return any(getattr(self, name) for name in SIGNALS)

    def trust_tiers(self) -> list[str]:
        if self.trust:
            return [self.trust]
        return list(self.floor or KIND_TRUST.get(self.kind or "failure"))

    def filters(self) -> dict:
        plain = {
            k: v
            for k, v in (
                ("repo", self.repo),
                ("repos", list(self.repos)),
                ("org", self.org),
                ("trust", self.trust),
                ("state", self.state),
                ("author", self.author),
                ("kind", self.kind),
                ("since", self.since),
            )
            if v
        }
        plain.update({name: list(getattr(self, name)) for name in SIGNALS if getattr(self, name)})
        return plain


def _query(text: str | None) -> tuple[str, int | None]:
    """The query, and its length before a cut: a pasted traceback (up to MAX_PASTE_CHARS,
    ``inputs.query``) is cut to MAX_QUERY_CHARS by the one cutting rule."""
    if not text or len(text) <= MAX_QUERY_CHARS:
        return text or "", None
    return excerpts.cut(text, MAX_QUERY_CHARS)[0], len(text)


def parse_request(params) -> SearchRequest:
    got = inputs.parse("search", params)  # as contract/verbs declares it
    text, pasted_chars = _query(got["q"])
    terms = tuple(dict.fromkeys(t.lower() for t in _TERM_RE.findall(text)))[:MAX_TERMS]
    signals = {name: got[name] for name in SIGNALS}
    if not terms and not any(signals.values()):
        raise BadRequest(
            "the query has no searchable words (and no --file/--error/--test/--symbol)"
        )
    limit = got["limit"]
    if got["kind"] == "precedent":
        limit = min(limit, PRECEDENT_LIMIT)
    named = tuple(got["repo"])
    one = len(named) == 1 and not got["org"]
    return SearchRequest(
        text=text,
        repo=named[0] if one else None,
        repos=() if one else named,
        org=got["org"],
        limit=limit,
        trust=got["trust"],
        state=got["state"],
        author=got["author"],
        kind=got["kind"],
        since=got["since"],
        terms=terms,
        pasted_chars=pasted_chars,
        **signals,
    )


# What a pasted traceback holds, by the same functions the signals were extracted with.
_LEGS = """
select
    array(select distinct e.normal_form from marts.relore_error_lines(%(t)s) as e
          where e.normal_form is not null) as errors,
    array(select distinct x.test_id from marts.relore_test_ids(%(t)s) as x) as tests,
    array(select p from marts.relore_prose_paths(%(t)s) as p limit 5) as files
"""
_FRAME = re.compile(r'^\s*(File "|at |\s{2,}\S|Traceback \(most recent call last\))')
_ERRORISH = re.compile(r"^\s*(E\s+)?[\w.]*(Error|Exception)\b.*:|Traceback \(most recent", re.M)
RRF_K = 10


# One pasted line is a failure when it is an error line as relore_error_lines reads one.
_ERROR_LINE = excerpts.PYTHON_ERROR_LINE
_MESSAGE = re.compile(r":\s*\S")  # the error line says something after its name


def looks_like_a_failure(text: str) -> bool:
    """A pasted traceback, or a single error line with its message (`KeyError: 'x'`):
    either is split into legs. A lone name (`KeyError`) is a word like any other."""
    if "\n" not in text.strip():
        return bool(_ERROR_LINE.match(text)) and _MESSAGE.search(text) is not None
    return bool(_ERRORISH.search(text))


def _page(request: SearchRequest, answer: ranked.Ranked) -> dict:
    rows, widened, normalized = answer.rows, answer.widened, answer.normalized
    hits = [page_hits.hit(r) for r in rows]
    page = {
        "query": request.text,
        "terms": list(request.terms),
        "filters": request.filters(),
        "widened": widened,
        "returned": len(rows),
        "total": answer.total,
        "counted": answer.counted,
        **({"total_is_lower_bound": True} if answer.total_is_lower_bound else {}),
        **({"total_holds": answer.counts_from} if answer.counted == "documents" else {}),
        "matches": answer.total,
        "all_terms": answer.strict_total,
        "per_thread_cap": PER_THREAD,
        "per_thread_capped": answer.capped,
        "trust_floor": request.trust_tiers(),
        "hits": hits,
    }
    if answer.fill:
        page["fill"] = {
            "every_word": sum(1 for h in hits if h["all_terms"]),
            "some_words": sum(1 for h in hits if not h["all_terms"]),
            **answer.fill,
        }
    applied = {k: v for k, v in normalized.items() if v is not None}
    if applied:
        page["normalized_filters"] = applied
    return page


async def _legs(cur, request: SearchRequest) -> list[tuple[str, SearchRequest]]:
    """A pasted traceback, split into what the index holds signals for, plus its prose."""
    await cur.execute(_LEGS, {"t": request.text})
    found = await cur.fetchone()
    prose = " ".join(line for line in request.text.splitlines() if not _FRAME.match(line))
    prose_terms = tuple(dict.fromkeys(t.lower() for t in _TERM_RE.findall(prose)))[:12]
    base = {
        "repo": request.repo, "repo_id": request.repo_id, "repos": request.repos,
        "org": request.org, "scope": request.scope, "limit": MAX_LIMIT,
        "trust": request.trust, "state": request.state, "author": request.author,
        "kind": request.kind, "since": request.since, "floor": request.floor,
    }  # fmt: skip
    legs = []
    # a signal leg ranks its threads' documents by the prose, and admits any that holds one
    # of its words: the document that quotes the error, never a bare "thanks" in its thread
    worded = {"text": prose, "terms": prose_terms, "least": 1}
    if found["errors"]:
        legs.append(("error", SearchRequest(error=tuple(found["errors"][:5]), **worded, **base)))
    if found["tests"]:
        legs.append(("test", SearchRequest(test=tuple(found["tests"][:5]), **worded, **base)))
    if found["files"]:
        legs.append(
            (
                "file",
                SearchRequest(text=prose, terms=prose_terms, file=tuple(found["files"]), **base),
            )
        )
    legs.append(("text", SearchRequest(text=prose, terms=prose_terms, **base)))
    return legs


@notices.stated(notices.search)
async def search(conn: AsyncConnection, request: SearchRequest) -> dict:
    """One page. A kind whose floor is above `reported` (rationale) and finds nothing there is
    asked again with reported text admitted, and the page says so: before authority has
    resolved write access, maintainers of an organisation are `reported`, and an empty page
    would hide every answer. Machine text is never admitted this way.

    A request naming a repository the index holds nothing for is ``errors.NotIndexed``."""
    if request.repo and request.repo_id is None:
        request = replace(request, repo_id=await repos.require(conn, request.repo))
    elif request.repo_id is None and not request.scope:
        scope = await repos.scope(conn, request.repos, request.org)
        # one repository held (or of the owner's): its own index, as when named
        request = replace(request, scope=scope, repo_id=scope[0][0] if len(scope) == 1 else None)
    async with conn.cursor(row_factory=dict_row) as cur:
        page = await _answer(cur, request)
        floor = request.trust_tiers()
        if page["hits"] or request.trust or "reported" in floor:
            return await _across(cur, request, page)
        lowered = replace(request, floor=(*floor, "reported"))
        second = await _answer(cur, lowered)
        if not second["hits"]:
            return await _across(cur, request, page)
        second["trust_lowered"] = {"from": floor, "to": lowered.trust_tiers()}
        return await _across(cur, request, second)


# Of the repositories a page ranked, those the hourly loop left behind (marts.repo_freshness:
# why in its words: backfilling, stale, budget, ...)
_BEHIND = """
select repo, behind_reason from marts.repo_freshness
where repo_id = any(%(repo_ids)s::bigint[]) and is_behind
order by repo
"""


async def _across(cur, request: SearchRequest, page: dict) -> dict:
    """A page ranked across repositories says how many, which its hits came from, and which
    were behind (their newest threads may be missing)."""
    if request.repo or (len(request.scope) < 2 and not (request.repos or request.org)):
        return page
    answered: dict[str, int] = {}
    for hit in page["hits"]:
        answered[hit["repo"]] = answered.get(hit["repo"], 0) + 1
    await cur.execute(_BEHIND, {"repo_ids": [r for r, _ in request.scope]})
    behind = [{"repo": r["repo"], "why": r["behind_reason"]} for r in await cur.fetchall()]
    page["repositories"] = {"searched": len(request.scope), "answered": answered, "behind": behind}
    return page


async def _answer(cur, request: SearchRequest) -> dict:
    """A pasted error split into legs, a description or question fused with meaning
    (semantic.fusion), or the lexical page with meaning asked only when it is empty."""
    failure = not request.has_signals and (
        request.pasted_chars is not None or looks_like_a_failure(request.text)
    )
    if not failure and request.repo_ids and fusion.route(request, failure=False).fused:
        # a fused page asks meaning itself and says which tiers answered
        page = await fused.page(cur, request, await _prepare(cur, request))
    else:
        page = (
            await _expanded(cur, request) if failure else _page(request, await _run(cur, request))
        )
        page = await fusion.answer(cur, request, page, failure=failure, read=_hits_by_meaning)
    if request.pasted_chars is not None:
        page["pasted_chars"] = request.pasted_chars  # the query is what the cut kept
    return page


async def _hits_by_meaning(cur, repo_id: int, wanted: list, lexemes: list[str]) -> dict:
    """The documents the semantic leg chose, read back and shown as the lexical page shows
    its own (a snippet around any of the words, else the passage's start)."""
    rows = await page_hits.page_rows(cur, repo_id, wanted, lexemes)
    return {doc: page_hits.hit(row) for doc, row in rows.items()}


async def _prepare(cur, request: SearchRequest) -> list[ranked.Prepared]:
    """The request resolved in each repository it ranks (one, or several together)."""
    if request.repo_id is not None:
        return [await ranked.prepare(cur, request, request.repo_id)]
    return await across.prepare_each(cur, request)


async def _run(cur, request: SearchRequest) -> ranked.Ranked:
    """A lexical page: in the named repository's index, or across several ranked together."""
    if request.repo_id is not None:
        return await ranked.run_repo(cur, request, request.repo_id)
    return await across.run(cur, request)


async def _run_legs(cur, request: SearchRequest, legs: list) -> list[ranked.Ranked]:
    """Every leg in one pass: resolved in turn (one connection), ranked in the index side by
    side, and every leg's page read back in one query (the legs share the prose's words)."""
    if request.repo_id is None:  # several repositories: each leg ranked across them
        return [await across.run(cur, leg) for _, leg in legs]
    return await ranked.rank_many(
        cur, [await ranked.prepare(cur, leg, request.repo_id) for _, leg in legs]
    )


async def _expanded(cur, request: SearchRequest) -> dict:
    """Each leg searched on its own, merged by reciprocal rank: a document found by several
    legs rises; the per-thread cap and the page cap apply to the merged list."""
    fused: dict[str, dict] = {}
    report = []
    legs = [(n, leg) for n, leg in await _legs(cur, request) if leg.terms or leg.has_signals]
    for (name, leg), answered in zip(legs, await _run_legs(cur, request, legs), strict=True):
        rows, widened, normalized = answered.rows, answered.widened, answered.normalized
        report.append(
            {
                "leg": name,
                "returned": len(rows),
                "widened": widened,
                **(
                    {"filters": {k: v for k, v in normalized.items() if v is not None}}
                    if leg.has_signals
                    else {}
                ),
                **({"terms": list(leg.terms)} if leg.terms else {}),
            }
        )
        for rank, row in enumerate(rows, 1):
            entry = fused.setdefault(row["document_id"], {"row": row, "rrf": 0.0, "legs": []})
            entry["rrf"] += 1.0 / (RRF_K + rank)
            entry["legs"].append(name)
    ranked = sorted(fused.values(), key=lambda e: (-len(e["legs"]), -e["rrf"]))
    per_thread: dict[tuple, int] = {}
    chosen = []
    capped = False
    for entry in ranked:
        key = (entry["row"]["repo"], entry["row"]["number"])
        if per_thread.get(key, 0) >= PER_THREAD:
            capped = True
            continue
        per_thread[key] = per_thread.get(key, 0) + 1
        chosen.append(entry)
    total = len(chosen)
    chosen = chosen[: request.limit]
    hits = []
    for entry in chosen:
        hit = page_hits.hit(entry["row"])
        hit["score"] = round(entry["rrf"], 4)
        hit["legs"] = entry["legs"]
        hits.append(hit)
    return {
        "query": request.text,
        "terms": list(request.terms),
        "filters": request.filters(),
        "expanded": True,
        "legs": report,
        "widened": any(leg["widened"] for leg in report),
        "returned": len(hits),
        "total": total,
        "counted": "documents",
        "matches": len(fused),
        "per_thread_cap": PER_THREAD,
        "per_thread_capped": capped,
        "trust_floor": request.trust_tiers(),
        "hits": hits,
    }
