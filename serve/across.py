"""A search across repositories: several named, an owner's, or every one held, ranked together.

A large repository has an index of its own, the small ones are members of the shared index
(``lexical/generations.py``). A search across them resolves the request in every repository
in one round trip (``ranking.RESOLVE_EACH``), walks each index once (``units``: the shared
index's members in scope as one walk, held to them), with every lexeme weighted by the
house's idf (``lexical.idf.shared``: one BM25 scale across the indexes), and merges:
documents holding every word first, then the fill, each part by score (a page with no words:
newest first). The per-thread cap is per repository's thread; each hit names its
repository. A fused page (``fused.py``) merges its legs the same way; the semantic leg's
similarity is one scale already.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import TYPE_CHECKING

from relore.serve import page_hits, ranked, ranking
from relore.serve.lexical import generations, idf, query, store

if TYPE_CHECKING:
    from relore.serve.search import SearchRequest


async def prepare_each(cur, request: SearchRequest) -> list[ranked.Prepared]:
    """The request resolved in each repository of its scope (one round trip), each index
    made fresh (``units`` groups them into what is walked)."""
    await cur.execute(
        ranking.RESOLVE_EACH,
        {
            "repo_ids": request.repo_ids,
            "text": " ".join(request.terms),
            "prose": request.text,
            **{name: list(getattr(request, name)) or None for name in ranked.SIGNALS},
        },
    )
    resolved = {row["scope_repo_id"]: row for row in await cur.fetchall()}
    indexes = store.for_connection(cur.connection)
    marks = {repo_id: generations.Marks.of(row) for repo_id, row in resolved.items()}
    opened = await indexes.fresh_each(cur.connection, resolved, marks)
    return [
        ranked.prepared_with(
            request,
            repo_id,
            resolved[repo_id],
            opened[repo_id],
            indexes.reader(repo_id),
            alone=False,
            marks=marks[repo_id],
        )
        for repo_id in request.repo_ids
    ]


def units(prepared: list[ranked.Prepared]) -> list[ranked.Prepared]:
    """What a search across ``prepared`` walks: each own index, and the shared index's
    members in scope as one (held to them: ``lexical.shared.View``) when their filters
    resolved alike (a path's aliases are a repository's own: else each member is walked on
    its own), each with the weights that put every index's scores on one scale."""
    walked: list[ranked.Prepared] = []
    together: dict[object, list[ranked.Prepared]] = {}
    for each in prepared:
        reader = each.reader
        if isinstance(reader, store.MemberReader) and each.searcher is not None:
            together.setdefault((id(reader.shared), each.filters), []).append(each)
        else:
            walked.append(each)
    for group in together.values():
        if len(group) == 1:
            walked.append(group[0])
            continue
        reader = store.MemberReader(group[0].reader.shared, tuple(p.repo_id for p in group))
        searcher = reader.searcher()
        if searcher is None:  # the shared index moved on under the request: one at a time
            walked.extend(group)
            continue
        walked.append(
            replace(
                group[0],
                repo_id=None,
                searcher=searcher,
                reader=reader,
                state=tuple(p.state for p in group),
                members=reader.repositories(),
            )
        )
    lexemes = prepared[0].lexemes if prepared else []
    for each, weights in zip(
        walked, idf.shared([p.searcher for p in walked], lexemes), strict=True
    ):
        each.weights = weights
    return walked


def thread_weights(prepared: list[ranked.Prepared]) -> None:
    """The threads indexes' weights (a fused page's whole-threads leg), read when it runs."""
    searchers = [p.threads for p in prepared]
    lexemes = prepared[0].lexemes if prepared else []
    for each, weights in zip(prepared, idf.shared(searchers, lexemes), strict=True):
        each.thread_weights = weights


def answers(prepared: ranked.Prepared) -> bool:
    """Whether a repository's index can hold an answer: one of the words is in it (or the
    request has no words: its filters decide)."""
    if prepared.searcher is None:
        return False
    return not prepared.request.terms or bool(prepared.weights)


def _normalized(prepared: list[ranked.Prepared]) -> dict:
    """Each signal filtered on, as the repositories' indexes compare it (a path's aliases are
    a repository's own): every repository's values, once each."""
    merged: dict[str, dict | None] = {}
    for each in prepared:
        for key, values in each.normalized.items():
            if values is None:
                merged.setdefault(key, None)
            else:
                held = merged.get(key) or {}
                held.update(dict.fromkeys(values))
                merged[key] = held
    return {key: None if held is None else list(held) for key, held in merged.items()}


def chunks(items: list, parts: int) -> list[list]:
    """``items`` in at most ``parts`` runs of about one length: a worker thread each."""
    size = max(1, -(-len(items) // max(1, parts)))
    return [items[i : i + size] for i in range(0, len(items), size)]


# worker threads one request's walks run in (tantivy releases the GIL): more only queue
WALKERS = max(1, min(4, os.cpu_count() or 1))


async def walk_each(prepared: list[ranked.Prepared]) -> list[ranked.Walked]:
    """Every repository's walk, a run of repositories per worker thread (a hundred small
    indexes cost a thread hop each otherwise); no hit's id read yet (``run`` reads the
    page's)."""
    runs = chunks(prepared, WALKERS)
    done = await asyncio.gather(
        *(
            asyncio.to_thread(lambda run=run: [ranked.walk(p, read_ids=False) for p in run])
            for run in runs
        )
    )
    return [walked for run in done for walked in run]


async def run(cur, request: SearchRequest) -> ranked.Ranked:
    """One lexical page across the request's repositories: every index walked, the hits
    merged (every word first, then the fill, each by score; a page with no words: newest
    first, read by ``ranked.rank_many``), and only the page's documents read back."""
    prepared = await prepare_each(cur, request)
    normalized = _normalized(prepared) or ranked.normalized_filters(
        request, dict.fromkeys(ranked.RESOLVED)
    )
    if not request.terms:
        live = [p for p in prepared if p.searcher is not None]
        if not live:
            return ranked.Ranked([], False, normalized, 0, 0)
        return _newest_first(request, normalized, await ranked.rank_many(cur, live))
    live = [p for p in units(prepared) if answers(p)]
    if not live:
        return ranked.Ranked([], False, normalized, 0, 0)
    # the page as ranked at every repository's marks (a build anywhere in scope retires it)
    results = store.for_connection(cur.connection).results
    key = ("across", request, tuple((p.repo_id, p.state) for p in prepared))
    found = results.get(key)
    if found is None:
        found = await _merged(cur, request, normalized, live)
        results.put(key, found)
    return found


async def _merged(cur, request, normalized: dict, live: list[ranked.Prepared]) -> ranked.Ranked:
    walked = await walk_each(live)
    merged = sorted(
        (
            (position >= each.strict, -hit.score, order, hit, p)
            for order, (p, each) in enumerate(zip(live, walked, strict=True))
            for position, hit in enumerate(each.hits)
        ),
        key=lambda e: e[:3],
    )[: request.limit]
    chosen = await asyncio.to_thread(
        lambda: [(*e[:3], query.resolve(e[4].searcher, e[3]), e[4]) for e in merged]
    )
    merged = chosen
    rows = await page_hits.page_rows(
        cur, [e[4].key(e[3].thread)[0] for e in merged], [e[3] for e in merged], live[0].lexemes
    )
    shown = [
        {**rows[e[3].document_id], "score": e[3].score}
        for e in merged
        if e[3].document_id in rows  # a document deleted since the index was read is left out
    ]
    fill = next((w.fill for w in walked if w.fill), None)
    return ranked.Ranked(
        shown,
        any(w.widened for w in walked),
        normalized,
        sum(w.total for w in walked),
        sum(w.strict_total for w in walked),
        fill,
        any(w.capped for w in walked),
        walked[0].counts_from,
    )


def _newest_first(request, normalized: dict, parts: list[ranked.Ranked]) -> ranked.Ranked:
    """A page with no words (filters only) across repositories: threads newest first."""
    rows = sorted(
        (r for part in parts for r in part.rows), key=lambda r: r["created_at"], reverse=True
    )
    return ranked.Ranked(
        rows[: request.limit],
        False,
        normalized,
        sum(p.total for p in parts),
        sum(p.strict_total for p in parts),
        None,
        any(p.capped for p in parts),
        0,
        "threads",
        any(p.total_is_lower_bound for p in parts),
    )
