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

import asyncio
import math
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import NamedTuple

from psycopg import AsyncConnection
from psycopg.rows import dict_row

from relore.contract.limits import MAX_HITS as MAX_LIMIT
from relore.contract.limits import (
    MAX_QUERY_CHARS,
)
from relore.serve import excerpts, fused, inputs, notices, page_hits, ranking, repos
from relore.serve.errors import BadRequest
from relore.serve.lexical import generations, query, store
from relore.serve.semantic import fusion
from relore.serve.terms import MAX_TERMS
from relore.serve.terms import TERM_RE as _TERM_RE

PER_THREAD = 3
# a page with no words (filters only) is threads, each shown by the document that carries
# the signal: chosen from this many of its newest matching documents; the walk that counts
# the threads reads at most this many documents (past it the count is a lower bound)
EVIDENCE_CANDIDATES = 20
THREADS_WALK_DOCUMENTS = 50_000


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
    # set only for a traceback's signal legs: fill from documents holding this many words
    least: int | None = None
    # set only when the query was a pasted traceback over MAX_QUERY_CHARS: its length before
    # excerpts.cut reduced it to its lead, its error line and the deepest frames
    pasted_chars: int | None = None

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
    return SearchRequest(
        text=text,
        repo=got["repo"],
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


class Ranked(NamedTuple):
    rows: list[dict]
    # hits below the strict conjunction (they match some of the words, not all)
    widened: bool
    normalized: dict
    # documents matching every word (and the filters); with a fill, those matching enough
    total: int
    strict_total: int
    # when widened: {"minimum": lexemes a filled hit holds at least, "of": the query's lexemes}
    fill: dict | None = None
    # the per-thread cap passed over a document the page would otherwise have shown
    capped: bool = False
    # ``total`` counts documents holding at least this many of the query's lexemes
    counts_from: int = 0
    # what ``total`` counts: documents, or threads (a page with no words)
    counted: str = "documents"
    total_is_lower_bound: bool = False


# A page shorter than the limit is filled from documents holding at least this share of the
# caller's lexemes (rounded up, at least one), ranked by BM25 over those they hold. Any one
# (0): measured on every slice (benchmarks/results/intent-slices.md, #36), half left 102 of
# 103 questions and every change description with an empty page and cost the error slices
# nothing when lowered; BM25's idf already puts a document holding one frequent word last.
FILL_SHARE = 0.0


def fill_minimum(n_lexemes: int) -> int:
    return max(1, math.ceil(n_lexemes * FILL_SHARE))


def _filters(request: SearchRequest, normalized: dict) -> query.Filters:
    since = None
    if request.since:
        since = int(datetime.fromisoformat(request.since).replace(tzinfo=UTC).timestamp())

    def values(key: str) -> tuple[str, ...] | None:
        return None if normalized[key] is None else tuple(normalized[key])

    return query.Filters(
        tiers=tuple(request.trust_tiers()),
        author=request.author,
        since=since,
        state=request.state,
        files=values("files"),
        errors=values("errors"),
        tests=values("tests"),
        symbols=values("symbols"),
    )


async def _resolve(cur, request: SearchRequest, repo_id: int) -> dict:
    await cur.execute(
        ranking.RESOLVE,
        {
            "repo_id": repo_id,
            "text": " ".join(request.terms),
            "prose": request.text,
            **{name: list(getattr(request, name)) or None for name in SIGNALS},
        },
    )
    return await cur.fetchone()


_RESOLVED = ("files", "errors", "tests", "symbols")


def _normalized(request: SearchRequest, resolved: dict) -> dict:
    """Each signal filtered on, as the index compares it (None: not filtered on). A filter
    whose every value normalizes to nothing still filters, to nothing, and the page says so."""
    return {
        key: list(resolved[key] or []) if getattr(request, name) else None
        for key, name in (
            ("files", "file"),
            ("errors", "error"),
            ("tests", "test"),
            ("symbols", "symbol"),
        )
    }


@dataclass
class _Prepared:
    """A request resolved for one repository: what the index is asked."""

    request: SearchRequest
    repo_id: int
    lexemes: list[str]
    filters: query.Filters
    normalized: dict
    searcher: object | None  # None: nothing can match (only stop words)
    # what the result depends on besides the request: the index state it is read at
    state: tuple = ()
    # the files the query's words name, in the index's form (a fused page's file leg)
    named_files: tuple[str, ...] = ()
    # the repository's threads index, one document per thread (a fused page's threads leg)
    threads: object | None = None


@dataclass
class _Walked:
    hits: list
    widened: bool
    total: int
    strict_total: int
    fill: dict | None
    capped: bool
    # the words a document holds at least to be counted in ``total``
    counts_from: int = 0
    # a page with no words: its threads and their candidate documents
    threads: query.Threads | None = None


async def _prepare(cur, request: SearchRequest, repo_id: int) -> _Prepared:
    resolved = await _resolve(cur, request, repo_id)
    normalized = _normalized(request, resolved)
    lexemes = list(resolved["lexemes"])
    searcher = threads = None
    if lexemes or not request.terms:  # only stop words: nothing can match
        indexes = store.for_connection(cur.connection)
        searcher = await indexes.fresh(cur.connection, repo_id, resolved)
        threads = indexes.reader(repo_id).thread_searcher()
    state = (resolved["database_oid"], generations.Marks.of(resolved))
    filters = _filters(request, normalized)
    named = tuple(resolved["named_files"] or ())
    return _Prepared(
        request, repo_id, lexemes, filters, normalized, searcher, state, named, threads
    )


def _walk(prepared: _Prepared) -> _Walked:
    """The strict conjunction over every match, then (when the page is not full) documents
    holding enough of the words, each ranked by BM25 over the whole index. Runs in a worker
    thread: tantivy releases the GIL, so searches use every core."""
    request, lexemes, filters = prepared.request, prepared.lexemes, prepared.filters
    searcher = prepared.searcher
    if searcher is None:
        return _Walked([], False, 0, 0, None, False, len(lexemes))
    if not request.terms:  # filters only: a page of threads, each by its evidence
        everything = query.build(searcher, [], 0, filters)
        found = query.threads_newest_first(
            searcher, everything, request.limit, EVIDENCE_CANDIDATES, THREADS_WALK_DOCUMENTS
        )
        hits = [query.Hit(docs[0], thread, 0.0) for thread, docs in found.page if docs]
        return _Walked(hits, False, found.total, found.total, None, False, 0, found)
    strict = query.build(searcher, lexemes, len(lexemes), filters)
    walk = query.ranked(searcher, strict, request.limit, PER_THREAD, newest_first=not lexemes)
    hits = walk.hits
    strict_total = total = walk.total
    widened, fill, capped = False, None, walk.capped
    minimum = len(lexemes)
    if len(lexemes) > 1:
        minimum = request.least or fill_minimum(len(lexemes))
    if minimum < len(lexemes):
        # the count is of the documents the page is drawn from (every word, then enough of
        # them), whatever the limit: a full strict page still counts the fill's documents
        wide = query.build(searcher, lexemes, minimum, filters)
        if len(hits) >= request.limit:
            total = query.count(searcher, wide)
        else:  # the fill's walk counts the same documents on its first step
            taken: dict[int, int] = {}
            for hit in hits:
                taken[hit.thread] = taken.get(hit.thread, 0) + 1
            more = query.ranked(
                searcher,
                wide,
                request.limit - len(hits),
                PER_THREAD,
                skip=frozenset(h.document_id for h in hits),
                taken=taken,
            )
            total = more.total
            capped = capped or more.capped
            if more.hits:
                widened = True
                hits = hits + more.hits
                fill = {"minimum": minimum, "of": len(lexemes)}
    return _Walked(hits, widened, total, strict_total, fill, capped, minimum)


def _ranked(prepared: _Prepared, walked: _Walked, rows: dict[str, dict]) -> Ranked:
    ordered = []
    for hit in walked.hits:
        row = rows.get(hit.document_id)
        if row is not None:  # a document deleted since the index was read is left out
            ordered.append({**row, "score": hit.score})
    return Ranked(
        ordered,
        walked.widened,
        prepared.normalized,
        walked.total,
        walked.strict_total,
        walked.fill,
        walked.capped,
        walked.counts_from,
        "threads" if walked.threads else "documents",
        bool(walked.threads and walked.threads.lower_bound),
    )


async def _rank_many(cur, prepared: list[_Prepared]) -> list[Ranked]:
    """Each prepared request ranked: from the results cache when the same request was
    answered at the same marks, else walked in the index side by side (worker threads) and
    read back with one page query per set of lexemes."""
    results = store.for_connection(cur.connection).results
    keys = [(p.request, p.repo_id, p.state) for p in prepared]
    answered: list[Ranked | None] = [results.get(key) for key in keys]
    missing = [i for i, found in enumerate(answered) if found is None]
    walked = await asyncio.gather(*(asyncio.to_thread(_walk, prepared[i]) for i in missing))
    by_lexemes: dict[tuple[int, tuple[str, ...]], list[int]] = {}
    for i in missing:
        by_lexemes.setdefault((prepared[i].repo_id, tuple(prepared[i].lexemes)), []).append(i)
    walk_of = dict(zip(missing, walked, strict=True))
    for i in missing:
        if walk_of[i].threads is not None:
            by_lexemes.pop((prepared[i].repo_id, tuple(prepared[i].lexemes)), None)
            walk_of[i].hits, lexemes = await _evidence(cur, prepared[i], walk_of[i].threads)
            rows = await page_hits.page_rows(cur, prepared[i].repo_id, walk_of[i].hits, lexemes)
            for row in rows.values():  # the filter is what it matched, not words
                row["all_terms"] = True
            answered[i] = _ranked(prepared[i], walk_of[i], rows)
            results.put(keys[i], answered[i])
    for (repo_id, lexemes), group in by_lexemes.items():
        hits = {h.document_id: h for i in group for h in walk_of[i].hits}
        rows = await page_hits.page_rows(cur, repo_id, list(hits.values()), list(lexemes))
        for i in group:
            answered[i] = _ranked(prepared[i], walk_of[i], rows)
            results.put(keys[i], answered[i])
    return answered


async def _evidence(cur, prepared: _Prepared, threads: query.Threads) -> tuple[list, list[str]]:
    """Each thread of a filter-only page by the document that carries the signal (else its
    newest match), in the page's order; and the filter values' lexemes its snippet is cut
    around."""
    request, normalized = prepared.request, prepared.normalized
    raw = [*request.error, *request.test, *request.symbol, *request.file]
    await cur.execute(
        ranking.EVIDENCE,
        {
            "repo_id": prepared.repo_id,
            "documents": [d for _, docs in threads.page for d in docs],
            **{key: normalized[key] for key in _RESOLVED},
            "text": " ".join(raw),
        },
    )
    found = await cur.fetchone()
    chosen = set(found["chosen"])
    hits = [
        query.Hit(next(d for d in docs if d in chosen), thread, 0.0)
        for thread, docs in threads.page
        if any(d in chosen for d in docs)
    ]
    return hits, list(found["lexemes"])


async def _run_repo(cur, request: SearchRequest, repo_id: int) -> Ranked:
    """One repository: resolve in SQL, rank in the index, read the page back."""
    return (await _rank_many(cur, [await _prepare(cur, request, repo_id)]))[0]


async def _run(cur, request: SearchRequest) -> Ranked:
    """One search, in the named repository or merged by score across every one held."""
    if request.repo_id is not None:
        return await _run_repo(cur, request, request.repo_id)
    await cur.execute(ranking.REPOSITORIES)
    repo_ids = [row["repo_id"] for row in await cur.fetchall()]
    parts = [await _run_repo(cur, request, repo_id) for repo_id in repo_ids]
    if not parts:
        return Ranked([], False, _normalized(request, dict.fromkeys(_RESOLVED)), 0, 0)
    rows = [row for part in parts for row in part.rows]
    newest = not request.terms
    rows.sort(key=lambda r: r["created_at"] if newest else r["score"], reverse=True)
    return Ranked(
        rows[: request.limit],
        any(p.widened for p in parts),
        parts[0].normalized,
        sum(p.total for p in parts),
        sum(p.strict_total for p in parts),
        next((p.fill for p in parts if p.fill), None),
        any(p.capped for p in parts),
        parts[0].counts_from,
        parts[0].counted,
        any(p.total_is_lower_bound for p in parts),
    )


def _page(request: SearchRequest, ranked: Ranked) -> dict:
    rows, widened, normalized = ranked.rows, ranked.widened, ranked.normalized
    hits = [page_hits.hit(r) for r in rows]
    page = {
        "query": request.text,
        "terms": list(request.terms),
        "filters": request.filters(),
        "widened": widened,
        "returned": len(rows),
        "total": ranked.total,
        "counted": ranked.counted,
        **({"total_is_lower_bound": True} if ranked.total_is_lower_bound else {}),
        **({"total_holds": ranked.counts_from} if ranked.counted == "documents" else {}),
        "matches": ranked.total,
        "all_terms": ranked.strict_total,
        "per_thread_cap": PER_THREAD,
        "per_thread_capped": ranked.capped,
        "trust_floor": request.trust_tiers(),
        "hits": hits,
    }
    if ranked.fill:
        page["fill"] = {
            "every_word": sum(1 for h in hits if h["all_terms"]),
            "some_words": sum(1 for h in hits if not h["all_terms"]),
            **ranked.fill,
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
        "repo": request.repo, "repo_id": request.repo_id, "limit": MAX_LIMIT,
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
    """A pasted error split into legs, a description or question fused with meaning
    (semantic.fusion), or the lexical page with meaning asked only when it is empty."""
    failure = not request.has_signals and (
        request.pasted_chars is not None or looks_like_a_failure(request.text)
    )
    if not failure and request.repo_id is not None and fusion.route(request, failure=False).fused:
        # a fused page asks meaning itself and says which tiers answered
        page = await fused.page(cur, request, await _prepare(cur, request, request.repo_id))
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


async def _run_legs(cur, request: SearchRequest, legs: list) -> list[Ranked]:
    """Every leg in one pass: resolved in turn (one connection), ranked in the index side by
    side, and every leg's page read back in one query (the legs share the prose's words)."""
    if request.repo_id is None:  # every repository held: each leg on its own
        return [await _run(cur, leg) for _, leg in legs]
    return await _rank_many(cur, [await _prepare(cur, leg, request.repo_id) for _, leg in legs])


async def _expanded(cur, request: SearchRequest) -> dict:
    """Each leg searched on its own, merged by reciprocal rank: a document found by several
    legs rises; the per-thread cap and the page cap apply to the merged list."""
    fused: dict[str, dict] = {}
    report = []
    legs = [(n, leg) for n, leg in await _legs(cur, request) if leg.terms or leg.has_signals]
    for (name, leg), ranked in zip(legs, await _run_legs(cur, request, legs), strict=True):
        rows, widened, normalized = ranked.rows, ranked.widened, ranked.normalized
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
