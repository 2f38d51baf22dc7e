"""One idf across repositories: what makes scores from different indexes comparable.

Each repository has an index of its own (fast, exact, and filtered to it for free), so its
BM25 weighs a lexeme by how rare it is *in that repository*: the same error line scores
higher in a repository of 50,000 threads than in one of 500. A search across repositories
searches each index with every lexeme's query scaled by the house's idf over the
repository's own (``Query.boost_query``): BM25 is a sum of idf times a term-frequency part,
so each document's score becomes BM25 with one idf over every repository searched, while
its length is still measured against its own repository's average. With documents of one
length, the scores equal one shared index's exactly
(``tests/unit/test_lexical_idf.py``); measured against one shared index on the quality
corpus in ``benchmarks/results/across-repositories.md``.

tantivy's idf is Robertson-Sparck Jones' with one added: ``ln(1 + (N - n + 0.5) / (n + 0.5))``
over the searcher's live documents ``N`` and a lexeme's document frequency ``n``.
"""

from __future__ import annotations

import math

from relore.serve.lexical import schema


def idf(doc_freq: int, docs: int) -> float:
    return math.log(1.0 + (docs - doc_freq + 0.5) / (doc_freq + 0.5))


def shared(searchers: list, lexemes: list[str], field: str = schema.TEXT) -> list[dict | None]:
    """For each searcher (None: a repository with nothing to read), each lexeme's weight:
    the idf over every searcher's documents divided by the idf over its own. A lexeme no
    document of a repository holds has no weight there (it never scores)."""
    held = [s for s in searchers if s is not None]
    docs = sum(s.num_docs for s in held)
    own = [{x: s.doc_freq(field, x) for x in lexemes} if s is not None else None for s in searchers]
    house = {x: sum(o[x] for o in own if o is not None) for x in lexemes}
    weights: list[dict | None] = []
    for searcher, freqs in zip(searchers, own, strict=True):
        if searcher is None:
            weights.append(None)
            continue
        weights.append(
            {x: idf(house[x], docs) / idf(n, searcher.num_docs) for x, n in freqs.items() if n > 0}
        )
    return weights
