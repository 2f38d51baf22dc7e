"""A search request ranked in one repository's index (or merged across every one): resolved
in SQL (its lexemes, its filters' normal forms, the files its words name), walked in the
tantivy index (the strict conjunction, then enough of the words), its page's documents
read back in one query, and cached by the marks it was read at. ``search.py`` routes a
request here, to a fused page (``fused.py``) or to a pasted error's legs.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from relore.serve import page_hits, ranking
from relore.serve.lexical import generations, idf, query, schema, store

if TYPE_CHECKING:
    from relore.serve.search import SearchRequest

PER_THREAD = 3
# a page with no words (filters only) is threads, each shown by the document that carries
# the signal: chosen from this many of its newest matching documents; the walk that counts
# the threads reads at most this many documents (past it the count is a lower bound)
EVIDENCE_CANDIDATES = 20
THREADS_WALK_DOCUMENTS = 50_000
# the request's signal filters, as RESOLVE names its parameters
SIGNALS = ("file", "error", "test", "symbol")


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


RESOLVED = ("files", "errors", "tests", "symbols")


def normalized_filters(request: SearchRequest, resolved: dict) -> dict:
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
class Prepared:
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
    # the repository's open index (store.Reader): its threads index is read only by a fused
    # page's threads leg, so a request that never ranks whole threads never opens it
    reader: object | None = None
    # each lexeme's weight when repositories are ranked together (lexical.idf.shared; None:
    # this repository alone), for the documents and for the threads index
    weights: dict[str, float] | None = None
    thread_weights: dict[str, float] | None = None
    # several repositories walked as one (members of the shared index, ``across.units``):
    # each member's slot -> its repository; None: ``repo_id``'s alone
    members: dict[int, int] | None = None

    def key(self, thread: int) -> tuple[int, int]:
        """(repository, thread number) of a thread as this request's index gives it back."""
        if self.members is None:
            return (self.repo_id, thread)
        return (self.members[thread >> schema.SLOT_SHIFT], thread & schema.NUMBER_MASK)

    @property
    def threads(self):
        """The repository's threads index, one document per thread (None: nothing to read)."""
        return self.reader.thread_searcher() if self.reader is not None else None


@dataclass
class Walked:
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
    # the first ``strict`` hits hold every word (the fill's follow)
    strict: int = 0


async def prepare(cur, request: SearchRequest, repo_id: int) -> Prepared:
    return await prepared_from(cur, request, repo_id, await _resolve(cur, request, repo_id))


def can_match(request: SearchRequest, resolved: dict) -> bool:
    """False when the words are only stop words (no lexeme): nothing can match them."""
    return bool(resolved["lexemes"]) or not request.terms


async def prepared_from(cur, request: SearchRequest, repo_id: int, resolved: dict) -> Prepared:
    """A request resolved for one repository (``ranking.RESOLVE``'s row), its index made
    fresh, ranked on its own."""
    searcher = reader = None
    if can_match(request, resolved):
        indexes = store.for_connection(cur.connection)
        searcher = await indexes.fresh(cur.connection, repo_id, resolved)
        reader = indexes.reader(repo_id)
    return prepared_with(request, repo_id, resolved, searcher, reader)


def prepared_with(
    request: SearchRequest,
    repo_id: int,
    resolved: dict,
    searcher,
    reader,
    alone: bool = True,
    marks: generations.Marks | None = None,
) -> Prepared:
    """A request resolved for one repository, over its index's fresh ``searcher``.
    ``alone`` false: ranked with others (``across.units`` weighs it), so no weights of its
    own; ``marks``: the row's, when the caller has them already."""
    normalized = normalized_filters(request, resolved)
    lexemes = list(resolved["lexemes"])
    if not can_match(request, resolved):
        searcher = reader = None
    state = (resolved["database_oid"], marks or generations.Marks.of(resolved))
    filters = _filters(request, normalized)
    named = tuple(resolved["named_files"] or ())
    prepared = Prepared(
        request, repo_id, lexemes, filters, normalized, searcher, state, named, reader
    )
    if alone:  # a member of the shared index, scored by its own idf
        prepared.weights = idf.own(searcher, lexemes)
    return prepared


def walk(prepared: Prepared, read_ids: bool = True) -> Walked:
    """The strict conjunction over every match, then (when the page is not full) documents
    holding enough of the words, each ranked by BM25 over the whole index. Runs in a worker
    thread: tantivy releases the GIL, so searches use every core."""
    request, lexemes, filters = prepared.request, prepared.lexemes, prepared.filters
    searcher = prepared.searcher
    if searcher is None:
        return Walked([], False, 0, 0, None, False, len(lexemes))
    if not request.terms:  # filters only: a page of threads, each by its evidence
        everything = query.build(searcher, [], 0, filters)
        found = query.threads_newest_first(
            searcher, everything, request.limit, EVIDENCE_CANDIDATES, THREADS_WALK_DOCUMENTS
        )
        hits = [query.Hit(docs[0], thread, 0.0) for thread, docs in found.page if docs]
        return Walked(hits, False, found.total, found.total, None, False, 0, found)
    weights = prepared.weights
    strict = query.build(searcher, lexemes, len(lexemes), filters, weights)
    walk = query.ranked(
        searcher, strict, request.limit, PER_THREAD, newest_first=not lexemes, read_ids=read_ids
    )
    hits = walk.hits
    strict_total = total = walk.total
    widened, fill, capped = False, None, walk.capped
    minimum = len(lexemes)
    if len(lexemes) > 1:
        minimum = request.least or fill_minimum(len(lexemes))
    if minimum < len(lexemes):
        # the count is of the documents the page is drawn from (every word, then enough of
        # them), whatever the limit: a full strict page still counts the fill's documents
        wide = query.build(searcher, lexemes, minimum, filters, weights)
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
                skip=query.skipped(hits),
                taken=taken,
                read_ids=read_ids,
            )
            total = more.total
            capped = capped or more.capped
            if more.hits:
                widened = True
                hits = hits + more.hits
                fill = {"minimum": minimum, "of": len(lexemes)}
    return Walked(hits, widened, total, strict_total, fill, capped, minimum, strict=len(walk.hits))


def _ranked(prepared: Prepared, walked: Walked, rows: dict[str, dict]) -> Ranked:
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


async def rank_many(cur, prepared: list[Prepared]) -> list[Ranked]:
    """Each prepared request ranked: from the results cache when the same request was
    answered at the same marks, else walked in the index side by side (worker threads) and
    read back with one page query per set of lexemes."""
    results = store.for_connection(cur.connection).results
    keys = [(p.request, p.repo_id, p.state) for p in prepared]
    answered: list[Ranked | None] = [results.get(key) for key in keys]
    missing = [i for i, found in enumerate(answered) if found is None]
    walked = await asyncio.gather(*(asyncio.to_thread(walk, prepared[i]) for i in missing))
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


async def _evidence(cur, prepared: Prepared, threads: query.Threads) -> tuple[list, list[str]]:
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
            **{key: normalized[key] for key in RESOLVED},
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


async def run_repo(cur, request: SearchRequest, repo_id: int) -> Ranked:
    """One repository: resolve in SQL, rank in the index, read the page back."""
    return (await rank_many(cur, [await prepare(cur, request, repo_id)]))[0]
