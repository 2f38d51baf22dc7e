"""A fused page: a description or a question ranked by whole thread rankings, merged.

Each leg ranks threads on its own, to DEPTH: the words (BM25 over every document holding any
of the query's lexemes, a thread by its best document), whole threads (BM25 over each
thread's own words as one text, the threads index: a change described is told across the
turns of the thread that made it), meaning (the semantic tier's nearest passages, when it
can answer), and, when the words name a file the repository knows, the threads that touched
it ranked by the same words. ``semantic.fusion.fuse`` merges them by
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
from relore.serve.lexical import query, schema
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


def _whole_threads(prepared, share: float) -> list[fusion.Ranked]:
    """The threads' leg: threads by BM25 over their own words as one text (the threads index),
    holding at least ``share`` of the lexemes. Its documents hold only the default trust
    tiers' words and no author or date: any other filter leaves the leg out."""
    filters = prepared.filters
    if (
        prepared.threads is None
        or not prepared.lexemes
        or set(filters.tiers) != set(schema.THREAD_TIERS)
        or filters.author
        or filters.since is not None
    ):
        return []
    least = max(1, math.ceil(len(prepared.lexemes) * share))
    asked = query.thread_query(prepared.lexemes, least, filters)
    found = query.whole_threads(prepared.threads, asked, fusion.DEPTH)
    return [fusion.Ranked(thread, "", score) for thread, score in found]


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


def _walked_by(weights: fusion.Weights, prepared) -> tuple:
    """What the words' legs are asked with under ``weights``: the same key, the same walks."""
    files = prepared.named_files if weights.file > 0 and prepared.named_files else None
    return (weights.words_share, files, weights.thread_share if weights.thread > 0 else None)


async def _word_legs(prepared, weights: fusion.Weights) -> tuple:
    """The words' legs side by side in worker threads: the words, the named files', the
    strict count and whole threads."""
    share, files, thread_share = _walked_by(weights, prepared)
    return await asyncio.gather(
        asyncio.to_thread(_walk, prepared, share, None),
        asyncio.to_thread(_walk, prepared, share, files) if files else asyncio.sleep(0),
        asyncio.to_thread(_strict_count, prepared),
        asyncio.to_thread(_whole_threads, prepared, thread_share)
        if thread_share is not None
        else asyncio.sleep(0, []),
    )


async def _legs(cur, request, prepared, shape: str) -> tuple:
    """Meaning and the words' legs, asked at once: the legs are walked with the weights
    meaning answers under while the question is embedded and its neighbours read, and walked
    again only when meaning could not answer and its absence asks other walks (a question's
    words then admit any document). Returns (meaning or Off, the weights, the legs)."""
    weights = fusion.WEIGHTS[shape]
    if fusion.meaning_unavailable(request):  # known before anything is asked: walk once
        found = await fusion.meaning(cur, request, weights.meaning_floor)
        weights = fusion.words_only(shape, weights)
        return found, weights, await _word_legs(prepared, weights)
    # a task group: when one fails the other is cancelled and awaited before the cursor is
    # given back
    async with asyncio.TaskGroup() as group:
        meant = group.create_task(fusion.meaning(cur, request, weights.meaning_floor))
        legs = group.create_task(_word_legs(prepared, weights))
    found, walked = meant.result(), legs.result()
    if isinstance(found, nearest.Off):  # no meaning: no question goes without its words
        without = fusion.words_only(shape, weights)
        if _walked_by(without, prepared) != _walked_by(weights, prepared):
            walked = await _word_legs(prepared, without)
        weights = without
    return found, weights, walked


async def page(cur, request, prepared) -> dict:
    """The fused page for ``request`` in one repository, ``prepared`` by search (its lexemes,
    filters, index searcher and the files its words name)."""
    shape = fusion.shape(request.text, prepared.named_files)
    found, weights, (words, by_file, strict_total, whole) = await _legs(
        cur, request, prepared, shape
    )
    files = _walked_by(weights, prepared)[1]
    legs = {
        "words": _ranked(words, weights.words_second),
        "file": _ranked(by_file, weights.words_second),
        "thread": whole,
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
    shown = await asyncio.to_thread(_documents, order, legs, prepared, walks)
    rows = await page_hits.page_rows(
        cur,
        request.repo_id,
        [fusion.SemanticHit(doc, score) for doc, score in shown.values()],
        prepared.lexemes,
    )
    near_of = {n.thread_number: n for n in near}
    worded = {e.thread for name in ("words", "file", "thread") for e in legs[name]}
    hits = []
    for thread, score in order:
        row = rows.get(shown[thread][0]) if thread in shown else None
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


def _documents(order, legs, prepared, walks) -> dict[int, tuple[str, float]]:
    """The document each page thread is shown by, with its leg's score: its best worded
    document (the words' leg, then the file's; its id read from the index here, for the
    page's threads only; for a thread only the threads' leg ranked, its document the words
    rank first), else its nearest passage."""
    searcher = prepared.searcher
    chosen: dict[int, tuple[str, float]] = {}
    wanted = {thread for thread, _ in order}
    any_word = None
    for name in ("words", "file", "thread", "meaning"):
        walk = walks.get(name)
        best = {t.thread: t.best for t in walk.threads} if walk else {}
        for entry in legs.get(name, []):
            if entry.thread not in wanted or entry.thread in chosen:
                continue
            address = best.get(entry.thread)
            if address is not None:
                document = query.document_id(searcher, address)
            elif name == "thread":
                if any_word is None:
                    any_word = query.build(searcher, prepared.lexemes, 1, prepared.filters)
                document = query.best_in_thread(searcher, any_word, entry.thread)
                if document is None:  # its words are in a tier the page does not show
                    continue
            else:
                document = entry.document_id
            chosen[entry.thread] = (document, entry.score)
    return chosen
