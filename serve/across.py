"""A search across repositories: several named, an owner's, or every one held, ranked together.

Each repository keeps its own index (a search in one stays as fast as it was); a search
across them resolves the request in every repository in one round trip
(``ranking.RESOLVE_EACH``), walks each index with every lexeme weighted by the house's idf
(``lexical.idf.shared``: one BM25 scale across the repositories), and merges: documents
holding every word first, then the fill, each part by score (a page with no words: newest
first). The per-thread cap is per repository's thread; each hit names its repository. A
fused page (``fused.py``) merges its legs the same way; the semantic leg's similarity is one
scale already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relore.serve import ranked, ranking
from relore.serve.lexical import idf

if TYPE_CHECKING:
    from relore.serve.search import SearchRequest


async def prepare_each(cur, request: SearchRequest) -> list[ranked.Prepared]:
    """The request resolved in each repository of its scope (one round trip), each index
    made fresh, with the weights that put every repository's scores on one scale."""
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
    prepared = [
        await ranked.prepared_from(cur, request, repo_id, resolved[repo_id])
        for repo_id in request.repo_ids
    ]
    lexemes = prepared[0].lexemes if prepared else []
    for each, weights in zip(
        prepared, idf.shared([p.searcher for p in prepared], lexemes), strict=True
    ):
        each.weights = weights
    return prepared


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


def _normalized(parts: list[ranked.Ranked]) -> dict:
    """Each signal filtered on, as the repositories' indexes compare it (a path's aliases are
    a repository's own): every repository's values, once each."""
    merged: dict = {}
    for part in parts:
        for key, values in part.normalized.items():
            if values is None:
                merged.setdefault(key, None)
            else:
                merged[key] = list(dict.fromkeys([*(merged.get(key) or []), *values]))
    return merged


async def run(cur, request: SearchRequest) -> ranked.Ranked:
    """One lexical page across the request's repositories."""
    prepared = await prepare_each(cur, request)
    live = [p for p in prepared if answers(p)]
    parts = await ranked.rank_many(cur, live) if live else []
    normalized = _normalized(parts) or ranked.normalized_filters(
        request, dict.fromkeys(ranked.RESOLVED)
    )
    if not parts:
        return ranked.Ranked([], False, normalized, 0, 0)
    rows = [row for part in parts for row in part.rows]
    if request.terms:  # every word first, then the fill; each by score
        rows.sort(key=lambda r: (not r["all_terms"], -r["score"]))
    else:
        rows.sort(key=lambda r: r["created_at"], reverse=True)
    return ranked.Ranked(
        rows[: request.limit],
        any(p.widened for p in parts),
        normalized,
        sum(p.total for p in parts),
        sum(p.strict_total for p in parts),
        next((p.fill for p in parts if p.fill), None),
        any(p.capped for p in parts),
        parts[0].counts_from,
        parts[0].counted,
        any(p.total_is_lower_bound for p in parts),
    )
