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

from relore.serve import across, page_hits
from relore.serve.lexical import query, schema, shared
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
    every_word = query.build(prepared.searcher, prepared.lexemes, least, filters, prepared.weights)
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
    asked = query.thread_query(prepared.lexemes, least, filters, prepared.thread_weights)
    found = query.whole_threads(prepared.threads, asked, fusion.DEPTH)
    return [fusion.Ranked(prepared.key(thread), "", score) for thread, score in found]


def _strict_count(prepared) -> int:
    if prepared.searcher is None or not prepared.lexemes:
        return 0
    strict = query.build(
        prepared.searcher, prepared.lexemes, len(prepared.lexemes), prepared.filters
    )
    return query.count(prepared.searcher, strict)


def _least(prepared, weights: fusion.Weights) -> int:
    return max(1, math.ceil(len(prepared.lexemes) * weights.words_share))


def _ranked(prepared, walk: query.ThreadWalk | None, second: float) -> list[fusion.Ranked]:
    """A words' leg in order: a thread by its best document's score plus ``second`` of its
    next one's; shown by its best document."""
    if walk is None:
        return []
    ranked = [
        fusion.Ranked(
            prepared.key(t.thread),
            "",  # read for the page's threads only (_documents)
            t.scores[0] + (second * t.scores[1] if len(t.scores) > 1 else 0.0),
        )
        for t in walk.threads
    ]
    return sorted(ranked, key=lambda r: -r.score) if second else ranked


def _merged(parts: list[list[fusion.Ranked]]) -> list[fusion.Ranked]:
    """One leg's rankings of several repositories as one, by score (one scale: the weights
    of ``lexical.idf``), to DEPTH; one repository's as it is."""
    if len(parts) == 1:
        return parts[0]
    every = [entry for part in parts for entry in part]
    return sorted(every, key=lambda e: -e.score)[: fusion.DEPTH]


def _walked_by(weights: fusion.Weights, files: bool) -> tuple:
    """What the words' legs are asked with under ``weights``: the same key, the same walks."""
    return (
        weights.words_share,
        weights.file > 0 and files,
        weights.thread_share if weights.thread > 0 else None,
    )


def _legs_of(each, asked: tuple) -> tuple:
    """One repository's walks: (words, by_file, strict count, whole threads)."""
    share, files, thread_share = asked
    named = each.named_files if files and each.named_files else None
    return (
        _walk(each, share, None),
        _walk(each, share, named) if named else None,
        _strict_count(each),
        _whole_threads(each, thread_share) if thread_share is not None else [],
    )


async def _walks(prepared: list, asked: tuple) -> tuple[list, list[tuple]]:
    """Each index's walks, side by side in worker threads: one repository's four legs at
    once; several indexes' (``across.units``) in runs, a run per worker thread. Returns what
    was walked and its walks."""
    share, files, thread_share = asked
    if len(prepared) > 1:
        prepared = across.units(prepared)
    # one idf over every index's threads; a member alone, its own (its threads' view is held
    # to it as its documents' is)
    if thread_share is not None and (len(prepared) > 1 or shared.partial(prepared[0].searcher)):
        across.thread_weights(prepared)
    if len(prepared) == 1:
        each = prepared[0]
        named = each.named_files if files and each.named_files else None
        return prepared, [
            tuple(
                await asyncio.gather(
                    asyncio.to_thread(_walk, each, share, None),
                    asyncio.to_thread(_walk, each, share, named) if named else asyncio.sleep(0),
                    asyncio.to_thread(_strict_count, each),
                    asyncio.to_thread(_whole_threads, each, thread_share)
                    if thread_share is not None
                    else asyncio.sleep(0, []),
                )
            )
        ]
    # a repository none of whose documents holds a word has nothing for the words' legs
    walking = [p for p in prepared if across.answers(p)]
    runs = across.chunks(walking, across.WALKERS)
    done = await asyncio.gather(
        *(asyncio.to_thread(lambda run=run: [_legs_of(p, asked) for p in run]) for run in runs)
    )
    return walking, [legs for run in done for legs in run]


async def _legs(cur, request, prepared: list, shape: str, files: bool) -> tuple:
    """Meaning and the words' legs, asked at once: the legs are walked with the weights
    meaning answers under while the question is embedded and its neighbours read, and walked
    again only when meaning could not answer and its absence asks other walks (a question's
    words then admit any document). Returns (meaning or Off, the weights, the repositories
    walked and their walks)."""
    weights = fusion.WEIGHTS[shape]
    if fusion.meaning_unavailable(request):  # known before anything is asked: walk once
        found = await fusion.meaning(cur, request, weights.meaning_floor)
        weights = fusion.words_only(shape, weights)
        return found, weights, *await _walks(prepared, _walked_by(weights, files))
    # a task group: when one fails the other is cancelled and awaited before the cursor is
    # given back
    async with asyncio.TaskGroup() as group:
        meant = group.create_task(fusion.meaning(cur, request, weights.meaning_floor))
        legs = group.create_task(_walks(prepared, _walked_by(weights, files)))
    found, (walking, walked) = meant.result(), legs.result()
    if isinstance(found, nearest.Off):  # no meaning: no question goes without its words
        without = fusion.words_only(shape, weights)
        if _walked_by(without, files) != _walked_by(weights, files):
            walking, walked = await _walks(prepared, _walked_by(without, files))
        weights = without
    return found, weights, walking, walked


async def page(cur, request, prepared: list) -> dict:
    """The fused page for ``request``, ``prepared`` by search in each repository it ranks
    (its lexemes, filters, index searcher and the files its words name)."""
    by_repo = {p.repo_id: p for p in prepared}
    named = [f for p in prepared for f in p.named_files]
    shape = fusion.shape(request.text, named)
    found, weights, walking, walked = await _legs(cur, request, prepared, shape, bool(named))
    files = _walked_by(weights, bool(named))[1]
    # each walked index's legs, keyed by its place in ``walking``
    words = {i: w[0] for i, w in enumerate(walked)}
    by_file = {i: w[1] for i, w in enumerate(walked)}
    second = weights.words_second
    legs = {
        "words": _merged([_ranked(walking[i], w, second) for i, w in words.items()]),
        "file": _merged([_ranked(walking[i], w, second) for i, w in by_file.items()]),
        "thread": _merged([w[3] for w in walked]),
    }
    strict_total = sum(w[2] for w in walked)
    semantic = {"state": "answered", "route": "fused", "shape": shape}
    near: list = []
    if isinstance(found, nearest.Off):
        semantic.update(state="off" if fusion.ENABLED else "not asked", reason=found.reason)
    else:
        near = found
        legs["meaning"] = [
            fusion.Ranked((n.repo_id, n.thread_number), n.document_id, n.similarity) for n in near
        ]
    order = fusion.fuse(legs, weights)[: request.limit]
    walks = {"words": words, "file": by_file}
    shown = await asyncio.to_thread(_documents, order, legs, by_repo, walking, walks)
    rows = await _rows(cur, shown, by_repo)
    near_of = {(n.repo_id, n.thread_number): n for n in near}
    worded = {e.thread for name in ("words", "file", "thread") for e in legs[name]}
    filed = {e.thread for e in legs["file"]}
    hits = []
    for key, score in order:
        row = rows.get(shown[key][0]) if key in shown else None
        if row is None:  # deleted since the index or the vectors were read
            continue
        hit = page_hits.hit(row)
        close = near_of.get(key)
        if key in worded:
            hit["matched_by"] = ["words", *(["meaning"] if close else [])]
            if key in filed:
                hit["matched_by"].append("file")
            if close:
                hit["similarity"] = round(close.similarity, 4)
        else:
            fusion.by_meaning(hit, close.similarity)
        hit["score"] = round(score, 4)
        hits.append(hit)
    hits = fusion.merged_first(hits, shape)
    if shape in fusion.MERGED_FIRST:
        semantic["merged_first"] = fusion.MERGED_FIRST[shape]
    least = _least(prepared[0], weights)
    total = sum(w.total for w in words.values() if w)
    for repo_id in by_repo:
        mine = [n for n in near if n.repo_id == repo_id]
        total += await fusion.count_unworded(cur, repo_id, mine, prepared[0].lexemes, least)
    capped = any(w and any(len(t.scores) > 1 for t in w.threads) for w in words.values())
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
        "total_holds": least,
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
            "minimum": least,
            "of": len(prepared[0].lexemes),
        }
    if files:
        result["named_files"] = list(dict.fromkeys(named))
    return result


async def _rows(cur, shown: dict, by_repo: dict) -> dict[str, dict]:
    """The page's documents read back, in one query whatever their repositories."""
    repo_ids = [repo_id for repo_id, _ in shown]
    hits = [fusion.SemanticHit(document, score) for document, score in shown.values()]
    lexemes = next(iter(by_repo.values())).lexemes
    return await page_hits.page_rows(cur, repo_ids, hits, lexemes)


def _documents(order, legs, by_repo, walking, walks) -> dict[tuple, tuple[str, float]]:
    """The document each page thread is shown by, with its leg's score: its best worded
    document (the words' leg, then the file's; its id read from the index here, for the
    page's threads only; for a thread only the threads' leg ranked, its document the words
    rank first), else its nearest passage."""
    chosen: dict[tuple, tuple[str, float]] = {}
    wanted = {key for key, _ in order}
    any_word: dict[int, object] = {}
    for name in ("words", "file", "thread", "meaning"):
        best = {
            walking[i].key(t.thread): (walking[i].searcher, t.best)
            for i, walk in walks.get(name, {}).items()
            if walk
            for t in walk.threads
        }
        for entry in legs.get(name, []):
            if entry.thread not in wanted or entry.thread in chosen:
                continue
            repo_id, thread = entry.thread
            prepared = by_repo[repo_id]
            found = best.get(entry.thread)
            if found is not None:
                document = query.document_id(*found)
            elif name == "thread":
                if repo_id not in any_word:
                    any_word[repo_id] = query.build(
                        prepared.searcher, prepared.lexemes, 1, prepared.filters
                    )
                document = query.best_in_thread(prepared.searcher, any_word[repo_id], thread)
                if document is None:  # its words are in a tier the page does not show
                    continue
            else:
                document = entry.document_id
            chosen[entry.thread] = (document, entry.score)
    return chosen
