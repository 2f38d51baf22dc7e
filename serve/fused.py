"""A fused page: a description or a question ranked by whole thread rankings, merged.

Each leg ranks threads on its own, to DEPTH: the words (BM25 over every document holding any
of the query's lexemes, a thread by its best document), meaning (the semantic tier's nearest
passages, when it can answer), and, when the words name a file the repository knows, the
threads that touched it ranked by the same words. ``semantic.fusion.fuse`` merges them by
weighted reciprocal rank, weighed by the query's shape. The page shows each thread once, by
the document that put it there — its best worded document, else its nearest passage — so
ten slots are ten threads. Only the page's documents are read back (``page_hits``).

The walks run in worker threads (tantivy releases the GIL); one request's ranking never
holds the event loop.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import replace

from relore.serve import page_hits
from relore.serve.lexical import query
from relore.serve.semantic import fusion, nearest

# documents a thread is read with on the words' leg: a second one says the page passed over
# more of the thread (per_thread_capped)
WALK_PER_THREAD = 2


def _walk(prepared, share: float, files: tuple[str, ...] | None) -> query.ThreadWalk | None:
    """The words' thread ranking over documents holding at least ``share`` of the lexemes
    (restricted to threads that touched ``files`` when given)."""
    if prepared.searcher is None or not prepared.lexemes:
        return None
    filters = prepared.filters if files is None else replace(prepared.filters, files=files)
    least = max(1, math.ceil(len(prepared.lexemes) * share))
    every_word = query.build(prepared.searcher, prepared.lexemes, least, filters)
    return query.ranked_threads(prepared.searcher, every_word, fusion.DEPTH, WALK_PER_THREAD)


def _strict_count(prepared) -> int:
    if prepared.searcher is None or not prepared.lexemes:
        return 0
    strict = query.build(
        prepared.searcher, prepared.lexemes, len(prepared.lexemes), prepared.filters
    )
    return query.count(prepared.searcher, strict)


def _least(prepared, weights: fusion.Weights) -> int:
    return max(1, math.ceil(len(prepared.lexemes) * weights.words_share))


def _ranked(walk: query.ThreadWalk | None, second: float) -> list[fusion.Ranked]:
    """A words' leg in order: a thread by its best document's score plus ``second`` of its
    next one's; shown by its best document."""
    if walk is None:
        return []
    ranked = [
        fusion.Ranked(
            t.thread,
            "",  # read for the page's threads only (_documents)
            t.scores[0] + (second * t.scores[1] if len(t.scores) > 1 else 0.0),
        )
        for t in walk.threads
    ]
    return sorted(ranked, key=lambda r: -r.score) if second else ranked


async def page(cur, request, prepared) -> dict:
    """The fused page for ``request`` in one repository, ``prepared`` by search (its lexemes,
    filters, index searcher and the files its words name)."""
    shape = fusion.shape(request.text, prepared.named_files)
    weights = fusion.WEIGHTS[shape]
    found = await fusion.meaning(cur, request, weights.meaning_floor, turns=weights.turns)
    if isinstance(found, nearest.Off):  # no meaning: no question goes without its words
        weights = replace(weights, words_share=fusion.WORDS_ONLY_SHARE)
    files = prepared.named_files if weights.file > 0 and prepared.named_files else None
    words, by_file, strict_total = await asyncio.gather(
        asyncio.to_thread(_walk, prepared, weights.words_share, None),
        asyncio.to_thread(_walk, prepared, weights.words_share, files)
        if files
        else asyncio.sleep(0),
        asyncio.to_thread(_strict_count, prepared),
    )
    legs = {
        "words": _ranked(words, weights.words_second),
        "file": _ranked(by_file, weights.words_second),
    }
    semantic = {"state": "answered", "route": "fused", "shape": shape}
    near: list = []
    if isinstance(found, nearest.Off):
        semantic.update(state="off" if fusion.ENABLED else "not asked", reason=found.reason)
    else:
        near = found
        legs["meaning"] = [
            fusion.Ranked(n.thread_number, n.document_id, n.similarity) for n in near
        ]
    order = fusion.fuse(legs, weights)[: request.limit]
    walks = {"words": words, "file": by_file}
    shown = await asyncio.to_thread(_documents, order, legs, prepared.searcher, walks)
    rows = await page_hits.page_rows(
        cur,
        request.repo_id,
        [fusion.SemanticHit(doc, score) for doc, score in shown.values()],
        prepared.lexemes,
    )
    near_of = {n.thread_number: n for n in near}
    worded = {e.thread for name in ("words", "file") for e in legs[name]}
    hits = []
    for thread, score in order:
        row = rows.get(shown[thread][0])
        if row is None:  # deleted since the index or the vectors were read
            continue
        hit = page_hits.hit(row)
        close = near_of.get(thread)
        if thread in worded:
            hit["matched_by"] = ["words", *(["meaning"] if close else [])]
            if thread in {e.thread for e in legs["file"]}:
                hit["matched_by"].append("file")
            if close:
                hit["similarity"] = round(close.similarity, 4)
        else:
            fusion.by_meaning(hit, close.similarity)
        hit["score"] = round(score, 4)
        hits.append(hit)
    total = words.total if words else 0
    least = _least(prepared, weights)
    total += await fusion.count_unworded(cur, request.repo_id, near, prepared.lexemes, least)
    capped = bool(words) and any(len(t.scores) > 1 for t in words.threads)
    by_meaning = sum(1 for h in hits if h["matched_by"] == ["meaning"])
    if semantic["state"] == "answered":
        semantic.update(threads=len(near), hits_by_meaning_only=by_meaning)
    every_word = sum(1 for h in hits if h["matched_by"] != ["meaning"] and h["all_terms"])
    some_words = sum(1 for h in hits if h["matched_by"] != ["meaning"] and not h["all_terms"])
    result = {
        "query": request.text,
        "terms": list(request.terms),
        "filters": request.filters(),
        "widened": some_words > 0,
        "returned": len(hits),
        "total": total,
        "counted": "documents",
        "total_holds": _least(prepared, weights),
        "matches": total,
        "all_terms": strict_total,
        "per_thread_cap": 1,
        "per_thread_capped": capped,
        "trust_floor": request.trust_tiers(),
        "hits": hits,
        "tiers": {"lexical": {"hits": len(hits) - by_meaning}, "semantic": semantic},
    }
    if some_words:
        result["fill"] = {
            "every_word": every_word,
            "some_words": some_words,
            "minimum": _least(prepared, weights),
            "of": len(prepared.lexemes),
        }
    if files:
        result["named_files"] = list(files)
    return result


def _documents(order, legs, searcher, walks) -> dict[int, tuple[str, float]]:
    """The document each page thread is shown by, with its leg's score: its best worded
    document (the words' leg, then the file's; its id read from the index here, for the
    page's threads only), else its nearest passage."""
    chosen: dict[int, tuple[str, float]] = {}
    wanted = {thread for thread, _ in order}
    for name in ("words", "file", "meaning"):
        walk = walks.get(name)
        best = {t.thread: t.best for t in walk.threads} if walk else {}
        for entry in legs.get(name, []):
            if entry.thread in wanted and entry.thread not in chosen:
                address = best.get(entry.thread)
                document = (
                    entry.document_id if address is None else query.document_id(searcher, address)
                )
                chosen[entry.thread] = (document, entry.score)
    return chosen
