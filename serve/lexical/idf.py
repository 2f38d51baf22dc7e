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
from relore.serve.lexical.shared import held_doc_freq, held_docs, partial


def idf(doc_freq: int, docs: int) -> float:
    return math.log(1.0 + (docs - doc_freq + 0.5) / (doc_freq + 0.5))


def shared(searchers: list, lexemes: list[str], field: str = schema.TEXT) -> list[dict | None]:
    """For each searcher (None: a repository with nothing to read), each lexeme's weight:
    the idf over every searcher's documents divided by the idf its scorer uses (its own
    index's; a view of some of the shared index's members: the shared index's, while the
    house counts only the members'). A lexeme no document of a searcher holds has no weight
    there (it never scores). One searcher alone: its documents' own idf."""
    held = [s for s in searchers if s is not None]
    docs = sum(held_docs(s) for s in held)
    own = [
        {x: held_doc_freq(s, field, x) for x in lexemes} if s is not None else None
        for s in searchers
    ]
    house = {x: sum(o[x] for o in own if o is not None) for x in lexemes}
    weights: list[dict | None] = []
    for searcher, freqs in zip(searchers, own, strict=True):
        if searcher is None:
            weights.append(None)
            continue
        weights.append(
            {
                x: idf(house[x], docs) / idf(searcher.doc_freq(field, x), searcher.num_docs)
                for x, n in freqs.items()
                if n > 0
            }
        )
    return weights


def own(searcher, lexemes: list[str], field: str = schema.TEXT) -> dict | None:
    """The weights that score a view of one member of the shared index by its own idf, as
    its own index would (None: a searcher whose idf is its documents' already)."""
    return shared([searcher], lexemes, field)[0] if partial(searcher) else None
