"""Corpus-wide search over ``marts.documents``: strict conjunction first, widened only if empty.

The conjunction is what stops a pasted sentence matching everything, so it always runs
first and nothing that answered it can be widened away. When it is empty, the terms are
disjoined and ranked by coverage (how many of the caller's terms a document carries), with
density only breaking ties — and the page says it widened. The per-thread cap is a window
function over the ranked matches, so one chatty thread cannot fill the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.contract import stamps
from relore.contract.envelope import quote
from relore.contract.limits import MAX_HITS as MAX_LIMIT
from relore.contract.limits import MAX_QUERY_CHARS, MAX_SIGNAL_VALUES, STATES, TRUST_TIERS
from relore.contract.limits import QUESTION_KINDS as KINDS
from relore.serve import inputs, notices, ranking, repos
from relore.serve.errors import BadRequest
from relore.serve.terms import MAX_TERMS
from relore.serve.terms import TERM_RE as _TERM_RE
from relore.serve.thread import thread_identity

PER_THREAD = 3
SNIPPET_CHARS = 400


# What a kind of question may be answered from (machine text only ever by name, trust=machine)
KIND_TRUST = {
    "failure": ("authoritative", "reported"),
    "rationale": ("authoritative",),
    "precedent": ("authoritative", "reported"),
}
PRECEDENT_LIMIT = 5
SIGNALS = ("file", "error", "test", "symbol")


@dataclass(frozen=True)
class SearchRequest:
    text: str
    repo: str | None = None
    # the repository's id, resolved once by search() (repos.require)
    repo_id: int | None = None
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


def parse_request(params) -> SearchRequest:
    text = inputs.text(params, "q", MAX_QUERY_CHARS, what="the query") or ""
    terms = tuple(dict.fromkeys(t.lower() for t in _TERM_RE.findall(text)))[:MAX_TERMS]
    signals = {
        name: inputs.many(params, name, MAX_SIGNAL_VALUES, MAX_QUERY_CHARS) for name in SIGNALS
    }
    if not terms and not any(signals.values()):
        raise BadRequest(
            "the query has no searchable words (and no --file/--error/--test/--symbol)"
        )
    limit = inputs.limit(params, MAX_LIMIT)
    kind = inputs.choice(params, "kind", KINDS)
    if kind == "precedent":
        limit = min(limit, PRECEDENT_LIMIT)
    return SearchRequest(
        text=text,
        repo=inputs.repo(params, required=False),
        limit=limit,
        trust=inputs.choice(params, "trust", TRUST_TIERS),
        state=inputs.choice(params, "state", STATES),
        author=params.get("author") or None,
        kind=kind,
        since=inputs.date(params, "since"),
        terms=terms,
        **signals,
    )


# The caller's filter values through the models' own normalizers (one rule, both sides).
_NORMALIZE = """
select
    -- each normalised path with every other name its file had (marts.path_aliases)
    (select array_agg(distinct a.path)
     from marts.relore_path_aliases(%(repo_id)s::bigint, array(
         select n.x
         from unnest(%(file)s::text[]) as v (raw),
              lateral (select marts.relore_path_normal_form(v.raw) as x) as n
         where n.x is not null)) as a (path)) as files,
    (select array_agg(distinct coalesce(l.normal_form, marts.relore_error_normal_form(v.raw)))
     from unnest(%(error)s::text[]) as v (raw)
     left join lateral marts.relore_error_lines(v.raw) as l on true) as errors,
    (select array_agg(distinct marts.relore_test_id_form(v.raw))
     from unnest(%(test)s::text[]) as v (raw)) as tests,
    (select array_agg(distinct coalesce(marts.relore_symbol_form(v.raw), v.raw))
     from unnest(%(symbol)s::text[]) as v (raw)) as symbols
"""

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
_ERROR_LINE = re.compile(r"^\s*(E\s+)?([A-Za-z_]\w*\.)*[A-Z]\w*(Error|Exception|Warning)(:\s|:?$)")


def looks_like_a_failure(text: str) -> bool:
    """A pasted traceback, or a single error line: either is split into legs."""
    if "\n" not in text.strip():
        return bool(_ERROR_LINE.match(text))
    return bool(_ERRORISH.search(text))


def _hit(row: dict) -> dict:
    return {
        **thread_identity(row),
        "document_id": row["document_id"],
        "document_kind": row["document_kind"],
        "author": row["author"],
        "trust": row["trust"],
        "date": stamps.date(row["created_at"]),
        "age": stamps.age(row["created_at"]),
        "score": round(float(row["score"]), 4),
        "matched_terms": int(row["matched_terms"]),
        **({"path": row["path"]} if row.get("path") else {}),
        "snippet": quote(row["snippet"]),
    }


async def _normalized(cur, request: SearchRequest) -> dict:
    if not request.has_signals:
        return {"files": None, "errors": None, "tests": None, "symbols": None}
    await cur.execute(
        _NORMALIZE,
        {"repo_id": request.repo_id, **{name: list(getattr(request, name)) for name in SIGNALS}},
    )
    row = await cur.fetchone()
    # a filter whose every value normalizes to nothing still filters (to nothing), honestly
    return {
        key: (row[key] or ["\x01unmatchable"]) if getattr(request, name) else None
        for key, name in (
            ("files", "file"),
            ("errors", "error"),
            ("tests", "test"),
            ("symbols", "symbol"),
        )
    }


class Ranked(NamedTuple):
    rows: list[dict]
    widened: bool
    normalized: dict
    # the candidates stopped at a bound (the cap, or the newest threads of a common signal)
    capped: bool


async def _run(cur, request: SearchRequest) -> Ranked:
    """One search: the strict conjunction, then (only if empty) the widened disjunction."""
    normalized = await _normalized(cur, request)
    params = {
        "text": " ".join(request.terms),
        "terms": list(request.terms),
        "n_terms": len(request.terms),
        "repo_id": request.repo_id,
        "author": request.author,
        "tiers": request.trust_tiers(),
        "state": request.state,
        "since": request.since,
        "limit": request.limit,
        "per_thread": PER_THREAD,
        "snippet_chars": SNIPPET_CHARS,
        "cap": ranking.CANDIDATE_CAP,
        **normalized,
    }
    driver = ranking.driver_for(normalized)
    newest_threads = False
    if driver:
        await cur.execute(ranking.driver_count_sql(driver), params)
        if (await cur.fetchone())["n"] > ranking.DRIVER_THREADS:
            # a signal this common: text goes through the GIN index; without text, the
            # newest documents come from the most recently updated threads
            driver, newest_threads = (None, False) if request.terms else (driver, True)
    await cur.execute(ranking.strict_sql(bool(request.terms), driver, newest_threads), params)
    rows = await cur.fetchall()
    widened = False
    if not rows and len(request.terms) > 1:
        widened = True
        await cur.execute(ranking.widened_sql(driver), params)
        rows = await cur.fetchall()
    capped = bool(rows) and (newest_threads or int(rows[0]["matches"]) >= ranking.CANDIDATE_CAP)
    return Ranked(rows, widened, normalized, capped)


def _page(request: SearchRequest, ranked: Ranked) -> dict:
    rows, widened, normalized = ranked.rows, ranked.widened, ranked.normalized
    page = {
        "query": request.text,
        "terms": list(request.terms),
        "filters": request.filters(),
        "widened": widened,
        "returned": len(rows),
        "total": int(rows[0]["total"]) if rows else 0,
        "matches": int(rows[0]["matches"]) if rows else 0,
        "per_thread_cap": PER_THREAD,
        "trust_floor": request.trust_tiers(),
        "hits": [_hit(r) for r in rows],
    }
    if ranked.capped:
        page["candidate_cap"] = ranking.CANDIDATE_CAP
    applied = {k: v for k, v in normalized.items() if v}
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
        "repo": request.repo, "repo_id": request.repo_id, "limit": MAX_LIMIT,
        "trust": request.trust, "state": request.state, "author": request.author,
        "kind": request.kind, "since": request.since, "floor": request.floor,
    }  # fmt: skip
    legs = []
    if found["errors"]:
        legs.append(("error", SearchRequest(text="", error=tuple(found["errors"][:5]), **base)))
    if found["tests"]:
        legs.append(("test", SearchRequest(text="", test=tuple(found["tests"][:5]), **base)))
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
    async with conn.cursor(row_factory=dict_row) as cur:
        page = await _answer(cur, request)
        floor = request.trust_tiers()
        if page["hits"] or request.trust or "reported" in floor:
            return page
        lowered = replace(request, floor=(*floor, "reported"))
        second = await _answer(cur, lowered)
    if not second["hits"]:
        return page
    second["trust_lowered"] = {"from": floor, "to": lowered.trust_tiers()}
    return second


async def _answer(cur, request: SearchRequest) -> dict:
    if not request.has_signals and looks_like_a_failure(request.text):
        return await _expanded(cur, request)
    return _page(request, await _run(cur, request))


async def _expanded(cur, request: SearchRequest) -> dict:
    """Each leg searched on its own, merged by reciprocal rank: a document found by several
    legs rises; the per-thread cap and the page cap apply to the merged list."""
    fused: dict[str, dict] = {}
    report = []
    for name, leg in await _legs(cur, request):
        if not leg.terms and not leg.has_signals:
            continue
        rows, widened, normalized, _ = await _run(cur, leg)
        report.append(
            {
                "leg": name,
                "returned": len(rows),
                "widened": widened,
                **(
                    {"filters": {k: v for k, v in normalized.items() if v}}
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
    for entry in ranked:
        key = (entry["row"]["repo"], entry["row"]["number"])
        if per_thread.get(key, 0) >= PER_THREAD:
            continue
        per_thread[key] = per_thread.get(key, 0) + 1
        chosen.append(entry)
    total = len(chosen)
    chosen = chosen[: request.limit]
    hits = []
    for entry in chosen:
        hit = _hit(entry["row"])
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
        "matches": len(fused),
        "per_thread_cap": PER_THREAD,
        "trust_floor": request.trust_tiers(),
        "hits": hits,
    }
