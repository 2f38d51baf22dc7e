"""Words and meaning on one page, routed by what the query is.

- A description or a question (QUESTION_TERMS words or more, no signal filter, not a pasted
  error) is **fused**: whole thread rankings, each leg's first DEPTH threads, merged by
  weighted reciprocal rank (RRF_K) thread by thread. The legs: the words (BM25 over every
  document holding any of them, a thread by its best document), meaning (the semantic tier's
  nearest passages), and, when the query names a file, the threads that touched it ranked by
  the same words (a path is evidence, not a filter). Each query *shape* weighs the legs as
  measured on every slice at once (WEIGHTS; benchmarks/results/intent-slices.md, #36). A
  fused page shows each thread once, by the document that put it there.
- A pasted error, a filtered query or a few words are **lexical-first**: the lexical page as
  it is; only when it is empty does the semantic leg answer, and then only with threads at
  least FLOOR similar (a filter the semantic leg cannot apply is never bypassed: a filtered
  query gets no meaning).

The page says which tiers answered (``tiers``: the semantic leg answered, was off and why,
or was not asked and why; a fused page also names its shape) and each hit says what matched
it (``matched_by``); a hit found by meaning carries its similarity.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace

from relore.serve import ranking
from relore.serve.semantic import nearest

# RELORE_SEMANTIC=off: a daemon that never asks the semantic leg (and says so on its pages)
ENABLED = os.environ.get("RELORE_SEMANTIC", "on").strip().lower() != "off"
QUESTION_TERMS = 3
RRF_K = 60
FLOOR = 0.3  # cosine similarity below which a lexical-first page is not filled by meaning
DEPTH = nearest.DEPTH  # threads each leg of a fused ranking offers


@dataclass(frozen=True)
class Weights:
    """What each leg of a fused ranking weighs, and what it admits."""

    words: float
    meaning: float
    file: float = 0.0
    # the words' leg ranks documents holding at least this share of the lexemes (at least 1)
    words_share: float = 0.0
    # the meaning leg ranks threads at least this similar
    meaning_floor: float = 0.0
    # the words' leg ranks a thread by its best document's score plus this share of its
    # second's (0: the best alone)
    words_second: float = 0.0
    # the whole threads' leg: BM25 over each thread's own words as one text (the threads
    # index), asked only at the default trust floor with no author or date filter
    thread: float = 0.0
    # the threads' leg ranks threads holding at least this share of the lexemes
    thread_share: float = 0.0


# By the query's shape, chosen on every slice at once (benchmarks/quality/fusion_grid.py;
# figures in benchmarks/results/intent-slices.md, #36). A question's words rarely hold half
# its lexemes in the thread that answers it, and every weight given to documents (or whole
# threads) holding fewer lowered the questions: its words' leg admits only those holding
# half (meaning carries it, an identifier-heavy question still has its words). A
# description leans on the whole threads' leg (its words are spread over the turns of the
# change it describes), with the best document and meaning at half weight; a file
# described leans on the words, the threads that touched the file, and a thread's
# second-best document (the whole threads' leg lowered it).
WEIGHTS = {
    "question": Weights(words=1.0, meaning=1.0, words_share=0.5),
    "description": Weights(words=0.5, meaning=0.5, thread=1.0),
    "path_description": Weights(words=1.0, meaning=0.25, file=1.0, words_second=0.5),
}
# A file described ("path: why does it ...") asks what was decided about that code: of the
# first MERGED_FIRST threads of its page, merged pull requests lead, each part in fused
# order. Chosen on the why slice's dev split (MRR 0.769 -> 0.797 at 5 and at 10, 0.777 at
# 3; every split 0.830 -> 0.854, tier off 0.809 -> 0.833; every other slice unchanged). The
# same for a description lowered the change slice's dev MRR (0.515 -> 0.489): not there.
# benchmarks/results/intent-slices.md, #36.
MERGED_FIRST = {"path_description": 5}
# With meaning unavailable (off, or no vectors): a question or a description leans on the
# threads' leg (a thread as one text, as BM25 over whole threads ranks it) with the best
# document's ranking beside it; a file described keeps its weights. Every words' leg then
# admits any document holding one of the words.
WORDS_ONLY_SHARE = 0.0
_PROSE_WORDS_ONLY = Weights(words=0.25, meaning=0.0, thread=1.0)
WORDS_ONLY = {"question": _PROSE_WORDS_ONLY, "description": _PROSE_WORDS_ONLY}


def words_only(shape: str, weights: Weights) -> Weights:
    """What a shape weighs when meaning cannot answer."""
    return WORDS_ONLY.get(shape) or replace(weights, words_share=WORDS_ONLY_SHARE)


# a question, or a problem told in the first person ("I load ... and get ...")
_QUESTION = re.compile(
    r"\?\s*$|^\s*(how|why|what|which|who|whose|is|are|was|were|does|do|did|can|"
    r"could|should|would|will|has|have|had)\b|\b(I|I'm|I've|my|me)\b",
    re.IGNORECASE,
)


def shape(text: str, named_files) -> str:
    """What a fused query is: a file named and described, a question, or a description."""
    if named_files:
        return "path_description"
    return "question" if _QUESTION.search(text) else "description"


def merged_first(hits: list[dict], shape: str) -> list[dict]:
    """A page's hits with the merged pull requests of its first ``MERGED_FIRST[shape]`` ahead
    of the rest of them (a stable reorder; a shape not listed keeps its order)."""
    head = MERGED_FIRST.get(shape, 0)
    if not head:
        return hits
    first = sorted(hits[:head], key=lambda h: not (h["kind"] == "pr" and h["state"] == "merged"))
    return first + hits[head:]


@dataclass(frozen=True)
class Route:
    fused: bool
    # why the semantic leg is not asked (None: it is)
    not_asked: str | None = None


def route(request, *, failure: bool) -> Route:
    """Fused or lexical-first, and whether meaning is asked at all. A fused route still ranks
    by the words (and a named file) when the semantic leg is off."""
    if request.has_signals:
        return Route(False, "a filtered query is answered by the filters and the words")
    if failure or len(request.terms) < QUESTION_TERMS:
        off = meaning_unavailable(request)
        return Route(False, off)
    return Route(True, meaning_unavailable(request))


def meaning_unavailable(request) -> str | None:
    if not ENABLED:
        return "turned off on this daemon (RELORE_SEMANTIC=off)"
    if not request.repo_ids:
        return "no repository is indexed"
    return None


@dataclass(frozen=True)
class Ranked:
    """One leg's thread, in its order: the document that put it there and its score."""

    thread: int
    document_id: str
    score: float


def fuse(legs: dict[str, list[Ranked]], weights: Weights) -> list[tuple[int, float]]:
    """Threads by weighted reciprocal rank over the legs' orders, best first; ties go to the
    thread a leg ranked higher, then to the words' leg order."""
    scores: dict[int, float] = {}
    best: dict[int, int] = {}
    for name, ranking_ in legs.items():
        weight = getattr(weights, name)
        for rank, entry in enumerate(ranking_, 1):
            if weight > 0:
                scores[entry.thread] = scores.get(entry.thread, 0.0) + weight / (RRF_K + rank)
            best[entry.thread] = min(best.get(entry.thread, rank), rank)
    ordered = sorted(scores, key=lambda t: (-scores[t], best[t]))
    return [(t, scores[t]) for t in ordered]


def _filters(request) -> dict:
    return {
        "tiers": request.trust_tiers(),
        "state": request.state,
        "author": request.author,
        "since": request.since,
    }


async def meaning(cur, request, floor: float = 0.0) -> list | nearest.Off:
    """The semantic leg's threads for a request, those at least ``floor`` similar (or why it
    cannot answer)."""
    if not_asked := meaning_unavailable(request):
        return nearest.Off(not_asked)
    found = await nearest.nearest(cur, request.repo_ids, request.text, _filters(request))
    if isinstance(found, nearest.Off):
        return found
    return [n for n in found if n.similarity >= floor]


@dataclass(frozen=True)
class SemanticHit:
    """What the page reads back for a thread only meaning found (ranking.PAGE's input)."""

    document_id: str
    score: float


def by_meaning(hit: dict, similarity: float) -> dict:
    """A hit only meaning found: it says how near, and carries no words' coverage."""
    hit.pop("partial", None)
    hit["matched_by"] = ["meaning"]
    hit["similarity"] = round(similarity, 4)
    hit["meaning"] = f"found by meaning, similarity {similarity:.2f}"
    return hit


async def answer(cur, request, page: dict, *, failure: bool, read) -> dict:
    """A lexical-first page (``page``) with the semantic leg asked only when the words found
    nothing. ``read(cur, repo_id, wanted, lexemes)`` reads the documents meaning found, as
    hits keyed by document id, the way the lexical page reads its own."""
    chosen = route(request, failure=failure)
    lexical = {"hits": len(page["hits"])}

    def said(state: str, **facts) -> dict:
        page["tiers"] = {
            "lexical": lexical,
            "semantic": {"state": state, "route": "lexical-first", **facts},
        }
        return page

    if chosen.not_asked:
        return said("not asked", reason=chosen.not_asked)
    if page["hits"]:
        return said("not asked", reason="the words answered")
    found = await meaning(cur, request)
    if isinstance(found, nearest.Off):
        return said("off", reason=found.reason)
    found = [n for n in found if n.similarity >= FLOOR][: request.limit]
    lexemes = await query_lexemes(cur, request.terms)
    read_back: dict = {}
    unworded = 0
    for repo_id in dict.fromkeys(n.repo_id for n in found):
        mine = [n for n in found if n.repo_id == repo_id]
        wanted = [SemanticHit(n.document_id, n.similarity) for n in mine]
        read_back.update(await read(cur, repo_id, wanted, lexemes))
        unworded += await count_unworded(cur, repo_id, mine, lexemes, 1)
    hits = [
        by_meaning(read_back[n.document_id], n.similarity)
        for n in found
        if n.document_id in read_back  # else deleted since the vectors were read
    ]
    page.update(hits=hits, returned=len(hits), total=page["total"] + unworded)
    return said("answered", threads=len(found), hits_by_meaning_only=len(hits))


async def count_unworded(cur, repo_id: int, found: list, lexemes: list[str], holds: int) -> int:
    """Of the documents meaning found, those the words' count left out (holding fewer than
    ``holds`` of the lexemes): a page's total counts documents, never threads."""
    if not found:
        return 0
    await cur.execute(
        ranking.UNWORDED,
        {
            "repo_id": repo_id,
            "documents": [n.document_id for n in found],
            "lexemes": lexemes,
            "holds": max(1, holds),
        },
    )
    return int((await cur.fetchone())["unworded"])


async def query_lexemes(cur, terms) -> list[str]:
    await cur.execute(_LEXEMES, {"text": " ".join(terms)})
    return list((await cur.fetchone())["lexemes"])


_LEXEMES = """
select array(
    select distinct x from unnest(tsvector_to_array(to_tsvector('english', %(text)s))) as x
) as lexemes
"""
