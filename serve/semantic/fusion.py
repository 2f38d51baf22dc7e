"""Words and meaning on one page, routed by what the query is.

- A natural-language question (QUESTION_TERMS words or more, no signal filter, not a pasted
  error) is **fused**: the lexical page's threads and the semantic leg's threads, each in its
  own order, merged by reciprocal rank (RRF_K), thread by thread. A thread keeps its
  lexical hits (the documents that carry the words); a thread only meaning found is shown by
  its nearest passage.
- A pasted error, a filtered query or a few words are **lexical-first**: the lexical page as
  it is; only when it is empty does the semantic leg answer, and then only with threads at
  least FLOOR similar (a question with no words in the index is still asked in meaning; a
  filter the semantic leg cannot apply is never bypassed: a filtered query gets no meaning).

The page says which tiers answered (``tiers``: the semantic leg answered, was off and why,
or was not asked and why) and each hit says what matched it (``matched_by``); a hit found
by meaning carries its similarity.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from relore.serve import ranking
from relore.serve.semantic import nearest

# RELORE_SEMANTIC=off: a daemon that never asks the semantic leg (and says so on its pages)
ENABLED = os.environ.get("RELORE_SEMANTIC", "on").strip().lower() != "off"
QUESTION_TERMS = 3
# the lexical leg of a fused question is filled from documents holding this share of its
# words (search.FILL_SHARE, any one, elsewhere). Half, measured (#36): RRF over the full
# disjunction's page lowered the questions from 0.600 / 0.354 to 0.429 / 0.240 (the extra
# lexical threads share the question's generic words). When the semantic leg is off, the
# page is asked again without it (answer's ``unfused``): no question goes empty for want
# of meaning.
QUESTION_FILL_SHARE: float | None = 0.5
RRF_K = 60
FLOOR = 0.3  # cosine similarity below which a lexical-first page is not filled by meaning


@dataclass(frozen=True)
class Route:
    fused: bool
    # why the semantic leg is not asked (None: it is)
    not_asked: str | None = None


def route(request, *, failure: bool) -> Route:
    if not ENABLED:
        return Route(False, "turned off on this daemon (RELORE_SEMANTIC=off)")
    if request.repo_id is None:
        return Route(False, "asked in every repository: meaning is searched within one (--repo)")
    if request.has_signals:
        return Route(False, "a filtered query is answered by the filters and the words")
    if failure:
        return Route(False, None)
    if len(request.terms) < QUESTION_TERMS:
        return Route(False, None)
    return Route(True)


def lexical_request(request):
    """The request the lexical page is asked: a fused question's with its own fill share."""
    if QUESTION_FILL_SHARE is None or not route(request, failure=False).fused:
        return request
    return replace(request, fill_share=QUESTION_FILL_SHARE)


@dataclass(frozen=True)
class SemanticHit:
    """What the page reads back for a thread only meaning found (ranking.PAGE's input)."""

    document_id: str
    score: float


def _filters(request) -> dict:
    return {
        "tiers": request.trust_tiers(),
        "state": request.state,
        "author": request.author,
        "since": request.since,
    }


def fuse(lexical_hits: list[dict], near: list, limit: int) -> tuple[list, dict]:
    """The page's order: ``("lexical", hit)`` and ``("semantic", Near)`` entries, at most
    ``limit``, and each thread's fused score. A thread's lexical hits stay together, in their
    order; a thread only meaning found is one entry, its nearest passage."""
    by_thread: dict[int, list[dict]] = {}
    lexical_order: list[int] = []
    for hit in lexical_hits:
        if hit["number"] not in by_thread:
            lexical_order.append(hit["number"])
        by_thread.setdefault(hit["number"], []).append(hit)
    semantic_of = {n.thread_number: n for n in near}
    scores: dict[int, float] = {}
    for rank, number in enumerate(lexical_order, 1):
        scores[number] = scores.get(number, 0.0) + 1.0 / (RRF_K + rank)
    for rank, n in enumerate(near, 1):
        scores[n.thread_number] = scores.get(n.thread_number, 0.0) + 1.0 / (RRF_K + rank)
    order = sorted(scores, key=lambda t: -scores[t])
    entries: list = []
    for number in order:
        if number in by_thread:
            entries.extend(("lexical", row) for row in by_thread[number])
        else:
            entries.append(("semantic", semantic_of[number]))
        if len(entries) >= limit:
            break
    return entries[:limit], scores


async def answer(cur, request, page: dict, *, failure: bool, read, unfused=None) -> dict:
    """``page`` (the lexical one) with the semantic leg routed in. ``read(cur, repo_id,
    wanted, lexemes)`` reads the documents of threads only meaning found, as hits keyed by
    document id, the way the lexical page reads its own. ``unfused()``, when given, is the
    lexical page as an unfused query is asked (search.FILL_SHARE): the page when the semantic
    leg turns out to be off."""
    chosen = route(request, failure=failure)
    how = "fused" if chosen.fused else "lexical-first"
    lexical = {"hits": len(page["hits"])}

    def said(state: str, **facts) -> dict:
        page["tiers"] = {"lexical": lexical, "semantic": {"state": state, "route": how, **facts}}
        return page

    if chosen.not_asked:
        return said("not asked", reason=chosen.not_asked)
    if not chosen.fused and page["hits"]:
        return said("not asked", reason="the words answered")
    found = await nearest.nearest(cur, request.repo_id, request.text, _filters(request))
    if isinstance(found, nearest.Off):
        if unfused is not None:
            page = await unfused()
            lexical["hits"] = len(page["hits"])
        return said("off", reason=found.reason)
    if not chosen.fused:
        found = [n for n in found if n.similarity >= FLOOR]
    entries, scores = fuse(page["hits"], found, request.limit)
    wanted = [SemanticHit(e.document_id, e.similarity) for kind, e in entries if kind == "semantic"]
    read_back = {}
    await cur.execute(_LEXEMES, {"text": " ".join(request.terms)})
    lexemes = list((await cur.fetchone())["lexemes"])
    if wanted:
        read_back = await read(cur, request.repo_id, wanted, lexemes)
    near_of = {n.thread_number: n for n in found}
    hits = []
    for kind, entry in entries:
        if kind == "lexical":
            hit = dict(entry)
            near = near_of.get(hit["number"])
            hit["matched_by"] = ["words", "meaning"] if near else ["words"]
            if near:
                hit["similarity"] = round(near.similarity, 4)
        else:
            hit = read_back.get(entry.document_id)
            if hit is None:  # deleted since the vectors were read
                continue
            hit.pop("partial", None)
            hit["matched_by"] = ["meaning"]
            hit["similarity"] = round(entry.similarity, 4)
            hit["meaning"] = f"found by meaning, similarity {entry.similarity:.2f}"
        if chosen.fused:
            hit["score"] = round(scores[hit["number"]], 4)
        hits.append(hit)
    # the page drew on the documents the words match and those only meaning found: counted
    # as documents, whatever the limit (never the page's threads added to a count of documents)
    unworded = 0
    if found:
        await cur.execute(
            ranking.UNWORDED,
            {
                "repo_id": request.repo_id,
                "documents": [n.document_id for n in found],
                "lexemes": lexemes,
                "holds": page.get("total_holds") or max(1, len(lexemes)),
            },
        )
        unworded = int((await cur.fetchone())["unworded"])
    page.update(hits=hits, returned=len(hits), total=page["total"] + unworded)
    by_meaning = sum(1 for h in hits if h["matched_by"] == ["meaning"])
    return said("answered", threads=len(found), hits_by_meaning_only=by_meaning)


_LEXEMES = """
select array(
    select distinct x from unnest(tsvector_to_array(to_tsvector('english', %(text)s))) as x
) as lexemes
"""
