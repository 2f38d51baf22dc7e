"""Semantic ranking for the quality run: a measurement to choose the tier's unit and fusion.

Not the tier itself (no storage, no service): the quality corpus's documents are embedded in
memory with the daemon's own encoder (``relore.serve.semantic.encoder``), and each item's
query is ranked against them by cosine, per repository. Two units:

* ``thread``: one text per thread, its title and opening post (what the encoder's 256-token
  window holds of it);
* ``passage``: the tier's own unit, read from ``marts.semantic_passages`` (the title before
  each of the opening post's first pieces of about 1,000 characters), a thread ranked by its
  best passage;
* ``document``: every live document on its own, after its thread's title, a thread ranked by
  its best document.

and fused with relore's lexical page by reciprocal rank (``RRF_K``), thread by thread.

Two levers on the passage unit, measured because the tier misses its paraphrase goal:

* ``prf``: pseudo-relevance feedback, the query's vector moved toward the mean of its first
  ``PRF_DEPTH`` passages (weight ``PRF_WEIGHT``) and ranked again;
* fusing the passage ranking with grep's (an any-word lexical leg, unlike relore's page,
  which a question's words rarely fill), done in run.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import metrics
import numpy as np
import psycopg

RRF_K = 60
DEPTH = 50  # threads a semantic ranking offers the page and the fusion
PRF_DEPTH = 3
PRF_WEIGHT = 0.3
PASSAGES = """
select c.repo, p.thread_number, p.passage_text
from marts.semantic_passages as p
join marts.corpus_stats as c on c.repo_id = p.repo_id
order by c.repo, p.thread_number, p.passage_index
"""

TEXTS = """
select d.repo, d.thread_number, d.document_id, d.document_kind, d.chunk_index,
    coalesce(t.title, '') || E'\\n' || d.body_text as titled,
    case when d.document_kind = 'opening_post' then coalesce(t.title, '') || E'\\n' else '' end
        || d.body_text as text
from marts.documents as d
join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
where not d.is_deleted
order by d.repo, d.thread_number, d.document_id
"""


@dataclass
class Unit:
    keys: list  # thread key per row
    vectors: np.ndarray  # [rows, dim], L2-normalised
    repos: np.ndarray  # repo per row (lowercase)


@dataclass
class Semantic:
    encoder: object
    units: dict[str, Unit]
    seconds: dict[str, float]

    def rank(self, unit: str, repo: str, query: str) -> list:
        """Thread keys by best cosine, in ``repo``, at most DEPTH."""
        return self._rank(unit, repo, self.encoder.encode([query])[0])

    def rank_with_feedback(self, unit: str, repo: str, query: str) -> list:
        """``rank``, the query's vector first moved toward its first PRF_DEPTH rows."""
        found = self.units[unit]
        vector = self.encoder.encode([query])[0]
        mask = found.repos == repo.lower()
        scores = np.where(mask, found.vectors @ vector, -np.inf)
        top = [row for row in np.argsort(-scores)[:PRF_DEPTH] if np.isfinite(scores[row])]
        if top:
            vector = vector + PRF_WEIGHT * found.vectors[top].mean(axis=0)
            vector = vector / np.linalg.norm(vector)
        return self._rank(unit, repo, vector)

    def _rank(self, unit: str, repo: str, vector: np.ndarray) -> list:
        found = self.units[unit]
        mask = found.repos == repo.lower()
        scores = np.where(mask, found.vectors @ vector, -np.inf)
        ranked = []
        for row in np.argsort(-scores):
            if not np.isfinite(scores[row]):
                break
            if found.keys[row] not in ranked:
                ranked.append(found.keys[row])
                if len(ranked) == DEPTH:
                    break
        return ranked


def build(url: str) -> Semantic:
    from relore.serve.semantic.encoder import Encoder

    encoder = Encoder()
    with psycopg.connect(url) as conn:
        rows = conn.execute(TEXTS).fetchall()
        passages = [
            (metrics.thread_key(repo, number), repo.lower(), text)
            for repo, number, text in conn.execute(PASSAGES).fetchall()
        ]
    seconds = {}
    threads: dict = {}
    for repo, number, _, kind, chunk, _, text in rows:
        if kind == "opening_post" and chunk == 0:
            threads[metrics.thread_key(repo, number)] = (repo.lower(), text)
    units = {}
    start = time.perf_counter()
    keys = list(threads)
    units["thread"] = Unit(
        keys,
        encoder.encode([threads[k][1] for k in keys]),
        np.array([threads[k][0] for k in keys]),
    )
    seconds["thread"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    units["passage"] = Unit(
        [p[0] for p in passages],
        encoder.encode([p[2] for p in passages]),
        np.array([p[1] for p in passages]),
    )
    seconds["passage"] = round(time.perf_counter() - start, 1)
    start = time.perf_counter()
    units["document"] = Unit(
        [metrics.thread_key(r[0], r[1]) for r in rows],
        encoder.encode([r[6] for r in rows]),
        np.array([r[0].lower() for r in rows]),
    )
    seconds["document"] = round(time.perf_counter() - start, 1)
    return Semantic(encoder, units, {**seconds, "threads": len(keys), "documents": len(rows)})


def fuse(*rankings: list) -> list:
    """Reciprocal-rank fusion of thread lists (each thread once, first place counts)."""
    scores: dict = {}
    for ranking in rankings:
        for rank, key in enumerate(metrics.threads_in_order(ranking), 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(scores, key=lambda k: -scores[k])
