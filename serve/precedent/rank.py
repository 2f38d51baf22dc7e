"""The order of a precedent page: three legs over the repository's closed pull requests, each
a ranking of its own, fused by weighted reciprocal rank, then merged ones first.

- **words**: BM25F in the search index (``serve/lexical``) over every document of a closed
  pull request holding any of the description's lexemes (titles, opening posts, comments,
  review comments and the paths and hunks they sit on), read twice, merged pull requests
  and the others, the first ``DOCUMENTS`` of each (``lexical.query.ranked_threads``). The
  index's kind term keeps closed issues out of the walk (at 1.2M documents they held 543k
  of the 621k documents closed without merging, and cost the walk their scoring). A thread
  scores its best document, measured on the change slice's dev split
  (benchmarks/results/precedent.md): summing three at 0.5 lowered the tier-off ranking
  from 0.363 / 0.413 (R@5 / MRR) to 0.290 / 0.328, a chatty thread outranking the one
  whose opening post is the change.
- **files**: the threads whose signals (``marts.thread_files``/``thread_symbols``, as the
  index holds them) carry a path or symbol the caller named with ``--file`` or in the
  description; most named first, then by words. Evidence that boosts, never a filter.
- **meaning**: the semantic tier's nearest threads (``serve/semantic/nearest.py``), when on.
- **threads**: BM25 over each closed thread's own words as one text (the threads index,
  ``serve/lexical``): the pull request whose review turns share the description's words
  between them, where no one document holds many. Its hits say ``words`` too.

The other legs' issues are dropped after their walks: a leg ranks pull requests only.
Open pull requests are never precedent (nothing was decided yet; ``inflight``
and ``search --state open`` show them): every leg reads closed threads only.

Merged first: of the pull requests that come within ``RELEVANT_SHARE`` of the best of some
leg (``strength``: words' BM25 over the best's, similarity over the best's, named files
shared over the most shared), the merged ones lead and those closed without merging follow,
each part in fused order; the rest come after, merged first again. A change that was tried and rejected is worth reading only after the ones
that landed, and never in place of a comparable one that did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import tantivy
from tantivy import Occur, Query

from relore.serve.lexical import idf, query, schema

DOCUMENTS = 300  # ranked documents read per state (merged, closed unmerged)
EVIDENCE_THREADS = 500  # threads read per named path or symbol
EVIDENCE_DOCUMENTS = 20_000
RRF_K = 10
# The threads leg at full weight and the best document's at a quarter: on the change slice
# (43 descriptions) R@5 / MRR went from 0.312 / 0.378 (tier off 0.349 / 0.380) to 0.337 /
# 0.405 (0.351 / 0.417); words 0.5 lifted the tier on further (0.355 / 0.412) but lowered
# the tier off's R@5 (0.345). benchmarks/results/precedent.md.
WEIGHTS = {"words": 0.25, "files": 1.0, "meaning": 1.0, "threads": 1.0}
RELEVANT_SHARE = 0.5
LEGS = tuple(WEIGHTS)


@dataclass(frozen=True)
class Worded:
    score: float
    # the thread's best document by the words, as the index addresses it (its id is read
    # for the page's pull requests only: query.document_id)
    address: object


@dataclass
class Legs:
    """What each leg found, by thread number (issues included until ``kinds`` drops them)."""

    words: dict[int, Worded] = field(default_factory=dict)
    # the named paths/symbols (in the index's normal form) each thread's signals carry
    evidence: dict[int, set[str]] = field(default_factory=dict)
    # thread -> (similarity, document id of its nearest passage)
    meaning: dict[int, tuple[float, str]] = field(default_factory=dict)
    # thread -> its BM25 score as one text (the threads index)
    threads: dict[int, float] = field(default_factory=dict)
    # a leg stopped at its read cap: more threads match than were ranked
    capped: bool = False


def _unmerged(closed: Query) -> Query:
    merged = Query.term_query(schema.SCHEMA, schema.STATE, "merged")
    return Query.boolean_query([(Occur.Must, closed), (Occur.MustNot, merged)])


def words(
    searcher: tantivy.Searcher,
    lexemes: list[str],
    tiers: tuple[str, ...],
    state: str,
    legs: Legs,
    weights: dict[str, float] | None = None,
) -> bool:
    """The words leg of one state into ``legs.words``: ``merged``, or ``closed`` (closed
    without merging); whether more documents matched than were ranked; ``weights``: a
    shared index member's own idf (``idf.own``). Blocking: run it in a worker thread (the
    two states side by side: they write different threads)."""
    if not lexemes:
        return False
    filters = query.Filters(tiers, state=state, kind="pr")
    asked = query.build(searcher, lexemes, 1, filters, weights)
    if state == "closed":
        asked = _unmerged(asked)
    walk = query.ranked_threads(searcher, asked, DOCUMENTS, documents=DOCUMENTS)
    for ranked in walk.threads:
        legs.words[ranked.thread] = Worded(ranked.scores[0], ranked.best)
    return walk.total > DOCUMENTS


def threads(searcher: tantivy.Searcher | None, lexemes: list[str], legs: Legs) -> bool:
    """The threads leg, into ``legs.threads``: closed threads (merged ones carry ``closed``
    too) ranked as whole texts. Blocking: run it in a worker thread. Never capped (False):
    it ranks threads, not documents."""
    if searcher is None or not lexemes:
        return False
    closed = query.thread_query(
        lexemes, 1, query.Filters(tiers=(), state="closed"), idf.own(searcher, lexemes)
    )
    for thread, score in query.whole_threads(searcher, closed, DOCUMENTS):
        legs.threads[thread] = score
    return False


def evidence(
    searcher: tantivy.Searcher,
    files: list[str],
    symbols: list[str],
    tiers: tuple[str, ...],
    legs: Legs,
) -> bool:
    """The files leg, into ``legs.evidence``: one posting list per named value, as search's
    ``--file``/``--symbol`` filters read it; whether a value's walk stopped at its cap.
    Blocking: run it in a worker thread."""
    capped = False
    for kind, values in (("files", files), ("symbols", symbols)):
        for value in values:
            named = query.Filters(tiers=tiers, state="closed", **{kind: (value,)})
            walk = query.threads_newest_first(
                searcher, query.build(searcher, [], 0, named), EVIDENCE_THREADS, 1,
                EVIDENCE_DOCUMENTS,
            )  # fmt: skip
            capped |= walk.lower_bound or walk.total > EVIDENCE_THREADS
            for thread, _ in walk.page:
                legs.evidence.setdefault(thread, set()).add(value)
    return capped


@dataclass(frozen=True)
class Fused:
    number: int
    score: float
    merged: bool
    # the legs that ranked it, each with its rank there (1-based)
    ranks: dict[str, int]


def orders(legs: Legs, pulls: dict[int, str]) -> dict[str, list[int]]:
    """Each leg's pull requests (``pulls``: number -> 'merged' | 'closed'), best first."""
    words = {t: w.score for t, w in legs.words.items() if t in pulls}
    return {
        "words": sorted(words, key=lambda t: (-words[t], -t)),
        "files": sorted(
            (t for t in legs.evidence if t in pulls),
            key=lambda t: (-len(legs.evidence[t]), -words.get(t, 0.0), -t),
        ),
        "meaning": sorted(
            (t for t in legs.meaning if t in pulls), key=lambda t: (-legs.meaning[t][0], -t)
        ),
        "threads": sorted(
            (t for t in legs.threads if t in pulls), key=lambda t: (-legs.threads[t], -t)
        ),
    }


def strength(legs: Legs, pulls: dict[int, str]) -> dict[int, float]:
    """How close each pull request comes to the best of some leg, 0-1: its words' score over
    the best words score, its similarity over the best, its share of the named values."""
    found: dict[int, float] = {}
    named = max((len(v) for t, v in legs.evidence.items() if t in pulls), default=0)
    for number in pulls:
        found[number] = len(legs.evidence.get(number, ())) / named if named else 0.0
    best = max((w.score for t, w in legs.words.items() if t in pulls), default=0.0)
    for number, worded in legs.words.items():
        if number in pulls and best > 0:
            found[number] = max(found[number], worded.score / best)
    whole = max((s for t, s in legs.threads.items() if t in pulls), default=0.0)
    for number, score in legs.threads.items():
        if number in pulls and whole > 0:
            found[number] = max(found[number], score / whole)
    near = max((s for t, (s, _) in legs.meaning.items() if t in pulls), default=0.0)
    for number, (similarity, _) in legs.meaning.items():
        if number in pulls and near > 0:
            found[number] = max(found[number], similarity / near)
    return found


def fuse(legs: Legs, pulls: dict[int, str]) -> list[Fused]:
    """Every pull request a leg ranked, in the page's order (see the module's docstring)."""
    ranks: dict[int, dict[str, int]] = {}
    scores: dict[int, float] = {}
    for leg, order in orders(legs, pulls).items():
        for rank, number in enumerate(order, 1):
            ranks.setdefault(number, {})[leg] = rank
            scores[number] = scores.get(number, 0.0) + WEIGHTS[leg] / (RRF_K + rank)
    strong = strength(legs, pulls)

    def place(number: int) -> tuple:
        weak = strong.get(number, 0.0) < RELEVANT_SHARE
        return (weak, pulls[number] != "merged", -scores[number], -number)

    return [Fused(n, scores[n], pulls[n] == "merged", ranks[n]) for n in sorted(scores, key=place)]


# what a hit's ``matched_by`` calls each leg: the threads leg is the words, read whole
SAID_AS = {"threads": "words"}


def matched_by(ranks: dict[str, int]) -> list[str]:
    said = [SAID_AS.get(leg, leg) for leg in LEGS if leg in ranks]
    return list(dict.fromkeys(said))
