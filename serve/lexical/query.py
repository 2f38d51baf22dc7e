"""A search as tantivy queries, and the ranked walk that applies the per-thread cap.

Every document that matches is ranked (block-max WAND over the whole posting lists): no
candidate cap decides the answer. Filters are exact, unscored clauses; a thread-level
signal (--file/--error/--test/--symbol) is a term of the thread's signal fields, in the normal
form Postgres resolved the caller's value to.
"""

from __future__ import annotations

from dataclasses import dataclass

import tantivy
from tantivy import Occur, Query

from relore.contract.limits import TRUST_TIERS as TIERS
from relore.serve.lexical import schema, shared

# How many ranked documents one walk step reads: a page of 10 at 3 per thread never needs
# more than a few steps, and a step costs one top-k search.
STEP = 64


@dataclass(frozen=True)
class Filters:
    tiers: tuple[str, ...]
    author: str | None = None
    since: int | None = None  # epoch seconds
    state: str | None = None
    # the thread's kind ('issue' or 'pr'); documents of the documents index only
    kind: str | None = None
    # signal values in their normal form; None: not filtered, (): matches nothing
    files: tuple[str, ...] | None = None
    errors: tuple[str, ...] | None = None
    tests: tuple[str, ...] | None = None
    symbols: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Hit:
    # None until read (``resolve``): a walk across repositories reads only its page's ids
    document_id: str | None
    thread: int
    score: float
    # where the index holds it (its stored id is read from here)
    address: object = None


def _key(address) -> tuple[int, int]:
    return (address.segment_ord, address.doc)


def resolve(searcher: tantivy.Searcher, hit: Hit) -> Hit:
    """The hit with its document's id read from the index (~0.1 ms a read)."""
    if hit.document_id is not None:
        return hit
    return Hit(document_id(searcher, hit.address), hit.thread, hit.score, hit.address)


def any_of(name: str, terms: list) -> Query:
    """Documents holding any of ``terms`` in field ``name``: a term query each, or'd.
    tantivy's ``term_set_query`` costs ~0.55 ms a search to set up however small the index
    (benchmarks/results/across-repositories.md), where a term query costs microseconds: a
    filter of a few values is a handful of term queries."""
    queries = [Query.term_query(schema.SCHEMA, name, term) for term in terms]
    if len(queries) == 1:
        return queries[0]
    return Query.boolean_query([(Occur.Should, q) for q in queries])


def _tier_clause(searcher: tantivy.Searcher, tiers: tuple[str, ...]) -> tuple[Occur, Query]:
    """Admit the allowed tiers, or exclude the others: whichever reads fewer postings (a
    clause over nearly every document would make each search walk the whole index)."""
    excluded = [t for t in TIERS if t not in tiers]
    postings = {t: searcher.doc_freq(schema.TIER, t) for t in TIERS}
    if sum(postings[t] for t in excluded) < sum(postings[t] for t in tiers):
        return Occur.MustNot, any_of(schema.TIER, excluded)
    return Occur.Must, any_of(schema.TIER, list(tiers))


def _filter_clauses(searcher: tantivy.Searcher, filters: Filters) -> list[tuple[Occur, Query]]:
    s = schema.SCHEMA
    clauses = [_tier_clause(searcher, filters.tiers)]
    if filters.author:
        clauses.append((Occur.Must, Query.term_query(s, schema.AUTHOR, filters.author.lower())))
    if filters.since is not None:
        bound = Query.range_query(
            s, schema.CREATED, tantivy.FieldType.Integer, filters.since, 2**62
        )
        clauses.append((Occur.Must, bound))
    if filters.state:
        clauses.append((Occur.Must, Query.term_query(s, schema.STATE, filters.state)))
    if filters.kind:
        clauses.append((Occur.Must, Query.term_query(s, schema.KIND, filters.kind)))
    clauses += [(Occur.Must, q) for q in _signal_queries(filters)]
    return [(occur, Query.const_score_query(q, 0.0)) for occur, q in clauses]


def _any_term(pairs: list[tuple[str, str]]) -> Query:
    """Documents holding any of the (field, term) pairs; none when there are none."""
    if not pairs:
        return Query.boolean_query([(Occur.MustNot, Query.all_query())])
    by_field: dict[str, list[str]] = {}
    for name, term in pairs:
        by_field.setdefault(name, []).append(term)
    queries = [any_of(name, terms) for name, terms in by_field.items()]
    if len(queries) == 1:
        return queries[0]
    return Query.boolean_query([(Occur.Should, q) for q in queries])


def _signal_queries(filters: Filters) -> list[Query]:
    """One clause per signal filtered on, any of its values. A caller's path matches a stored
    path that ends in it (at a ``/``) or that it ends in (an absolute path from a traceback
    meets the repository's relative one); a symbol, one that ends in it (at a ``.``)."""
    found = []
    if filters.files is not None:
        pairs = [(schema.FILE, f) for f in filters.files]
        # the stored path as one of the caller's proper tails (the whole path is in FILE)
        pairs += [(schema.FILE_PATH, t) for f in filters.files for t in schema.tails(f, "/")[1:]]
        found.append(_any_term(pairs))
    if filters.errors is not None:
        found.append(_any_term([(schema.ERROR, e) for e in filters.errors]))
    if filters.tests is not None:
        found.append(_any_term([(schema.TEST, t) for t in filters.tests]))
    if filters.symbols is not None:
        found.append(_any_term([(schema.SYMBOL, y) for y in filters.symbols]))
    return found


def _term(lexeme: str, weights: dict[str, float] | None) -> Query:
    term = Query.term_query(schema.SCHEMA, schema.TEXT, lexeme)
    weight = 1.0 if weights is None else weights.get(lexeme, 1.0)
    return term if weight == 1.0 else Query.boost_query(term, weight)


def text_query(lexemes: list[str], minimum: int, weights: dict[str, float] | None = None) -> Query:
    """Documents holding at least ``minimum`` of the lexemes, scored by BM25 over those held
    (each lexeme's score times its weight: ``idf.shared`` across repositories)."""
    terms = [(Occur.Should, _term(x, weights)) for x in lexemes]
    if minimum >= len(lexemes):
        return Query.boolean_query([(Occur.Must, q) for _, q in terms])
    return Query.boolean_query(terms, minimum_number_should_match=minimum)


def build(
    searcher: tantivy.Searcher,
    lexemes: list[str],
    minimum: int,
    filters: Filters,
    weights: dict[str, float] | None = None,
) -> Query:
    clauses = _filter_clauses(searcher, filters)
    if lexemes:
        clauses.append((Occur.Must, text_query(lexemes, minimum, weights)))
    if all(occur == Occur.MustNot for occur, _ in clauses):  # exclusions need a universe
        clauses.append((Occur.Must, Query.const_score_query(Query.all_query(), 0.0)))
    return Query.boolean_query(clauses)


def count(searcher: tantivy.Searcher, query: Query) -> int:
    """Every matching document."""
    return searcher.search(query, limit=1, count=True).count


@dataclass(frozen=True)
class Walk:
    hits: list[Hit]
    # every matching document (counted on the walk's first step)
    total: int
    # a document was passed over because its thread already had per_thread on the page
    capped: bool = False


def ranked(
    searcher: tantivy.Searcher,
    query: Query,
    limit: int,
    per_thread: int,
    *,
    newest_first: bool = False,
    skip: frozenset = frozenset(),
    taken: dict[int, int] | None = None,
    read_ids: bool = True,
) -> Walk:
    """The first ``limit`` documents by score (or newest first), at most ``per_thread`` from
    one thread counting ``taken`` (thread -> hits already on the page), none of ``skip``
    (``skipped``'s keys of hits already taken); and how many match in all. ``read_ids``
    false: each hit's id is left unread (``resolve`` reads it)."""
    taken = dict(taken or {})
    chosen: list[Hit] = []
    offset = 0
    total = 0
    capped = False
    while len(chosen) < limit:
        order = {"order_by_field": schema.CREATED} if newest_first else {}
        found = searcher.search(query, limit=STEP, offset=offset, count=offset == 0, **order)
        if offset == 0:
            total = found.count
        hits = found.hits
        if not hits:
            break
        threads = searcher.fast_field_values(schema.THREAD, [address for _, address in hits])
        for (key, address), thread in zip(hits, threads, strict=True):
            if taken.get(thread, 0) >= per_thread:
                capped = True
                continue
            if _key(address) in skip:
                continue
            document = searcher.doc(address)[schema.DOCUMENT][0] if read_ids else None
            taken[thread] = taken.get(thread, 0) + 1
            chosen.append(Hit(document, thread, 0.0 if newest_first else float(key), address))
            if len(chosen) == limit:
                break
        if len(hits) < STEP:
            break
        offset += STEP
    return Walk(chosen, total, capped)


# a filter-only walk reads every match: in larger steps than a ranked page's
WALK_STEP = 1024


@dataclass(frozen=True)
class Threads:
    # the first ``limit`` threads, newest activity first, each with its newest matching
    # documents (at most ``per_thread``): the candidates its evidence is chosen from
    page: list[tuple[int, list[str]]]
    # threads matching (a lower bound when the walk stopped at ``max_documents``)
    total: int
    lower_bound: bool = False


def threads_newest_first(
    searcher: tantivy.Searcher, query: Query, limit: int, per_thread: int, max_documents: int
) -> Threads:
    """A page of threads for a query with no words (filters only): every matching document
    walked newest first (up to ``max_documents``, in whole steps), grouped by thread in the
    order each thread first appears. Two searches at most: a step, and when it came back
    full, every document up to the cap at once (stepping on searched again from the top:
    tantivy collects offset + limit, so a 20,000-document walk collected 200,000)."""
    cap = -(-max_documents // WALK_STEP) * WALK_STEP
    hits = searcher.search(query, limit=WALK_STEP, order_by_field=schema.CREATED).hits
    if len(hits) == WALK_STEP and cap > WALK_STEP:
        hits = searcher.search(query, limit=cap, order_by_field=schema.CREATED).hits
    order: list[int] = []
    candidates: dict[int, list[str] | None] = {}  # None: a thread past the page
    threads = searcher.fast_field_values(schema.THREAD, [address for _, address in hits])
    for (_, address), thread in zip(hits, threads, strict=True):
        if thread not in candidates:
            order.append(thread)
            candidates[thread] = [] if len(order) <= limit else None
        docs = candidates[thread]
        if docs is not None and len(docs) < per_thread:
            docs.append(searcher.doc(address)[schema.DOCUMENT][0])
    lower_bound = len(hits) >= cap
    return Threads([(t, candidates[t]) for t in order[:limit]], len(order), lower_bound)


# A thread ranking reads at most this many ranked documents to find its threads: past it, a
# thread's best document ranks below every thread already found.
THREAD_WALK_DOCUMENTS = 2048


@dataclass(frozen=True)
class RankedThread:
    thread: int
    # its best documents' scores, best first (at most the walk's ``per_thread``)
    scores: tuple[float, ...]
    # its best document's address in the index: ``document_id`` reads its id, for the
    # threads a page shows only (a stored document read costs ~0.1 ms; a walk ranks 50)
    best: object


@dataclass(frozen=True)
class ThreadWalk:
    threads: list[RankedThread]
    # every matching document (counted on the walk's first step)
    total: int


def skipped(hits: list[Hit]) -> frozenset:
    """What ``ranked``'s ``skip`` takes: the hits' places in the index."""
    return frozenset(_key(h.address) for h in hits)


def document_id(searcher: tantivy.Searcher, address) -> str:
    return searcher.doc(address)[schema.DOCUMENT][0]


def ranked_threads(
    searcher: tantivy.Searcher,
    query: Query,
    depth: int,
    per_thread: int = 1,
    documents: int = THREAD_WALK_DOCUMENTS,
) -> ThreadWalk:
    """The first ``depth`` threads in the order of their best document's BM25 score, each
    with its best ``per_thread`` documents' scores: one leg of a fused ranking
    (semantic.fusion). One search reads the ranked documents and counts every match: the
    count scores every matching document anyway, so keeping THREAD_WALK_DOCUMENTS of them
    costs about what keeping a step's does, where stepping on searched again from the top."""
    order: list[int] = []
    scores: dict[int, list[float]] = {}
    best: dict[int, object] = {}
    found = searcher.search(query, limit=documents, count=True)
    page = found.hits
    threads = searcher.fast_field_values(schema.THREAD, [address for _, address in page])
    for (key, address), thread in zip(page, threads, strict=True):
        held = scores.get(thread)
        if held is None:
            if len(order) >= depth:
                continue
            order.append(thread)
            held = scores[thread] = []
            best[thread] = address
        if len(held) < per_thread:
            held.append(float(key))
            if len(order) >= depth and all(len(scores[t]) >= per_thread for t in order):
                break
    return ThreadWalk([RankedThread(t, tuple(scores[t]), best[t]) for t in order], found.count)


def thread_query(
    lexemes: list[str], minimum: int, filters: Filters, weights: dict[str, float] | None = None
) -> Query:
    """Threads (of the threads index) holding at least ``minimum`` of the lexemes in their
    own words, scored by BM25 over the whole thread; the state and signal filters as on a
    document (a thread document carries no tier, author or date: the caller asks this index
    only where those are the defaults)."""
    clauses = [(Occur.Must, text_query(lexemes, minimum, weights))]
    if filters.state:
        state = Query.term_query(schema.SCHEMA, schema.STATE, filters.state)
        clauses.append((Occur.Must, Query.const_score_query(state, 0.0)))
    clauses += [(Occur.Must, Query.const_score_query(q, 0.0)) for q in _signal_queries(filters)]
    return Query.boolean_query(clauses)


def whole_threads(searcher: tantivy.Searcher, query: Query, depth: int) -> list[tuple[int, float]]:
    """The first ``depth`` threads of the threads index by score: (thread, score)."""
    hits = searcher.search(query, limit=depth).hits
    threads = searcher.fast_field_values(schema.THREAD, [address for _, address in hits])
    return [(thread, float(key)) for (key, _), thread in zip(hits, threads, strict=True)]


def best_in_thread(searcher: tantivy.Searcher, query: Query, thread: int) -> str | None:
    """The id of the document of ``thread`` that ``query`` ranks first (None: none matches)."""
    value = shared.thread_value(searcher, thread)
    within = Query.const_score_query(Query.term_query(schema.SCHEMA, schema.THREAD, value), 0.0)
    hits = searcher.search(Query.boolean_query([(Occur.Must, query), (Occur.Must, within)]), 1).hits
    return document_id(searcher, hits[0][1]) if hits else None
