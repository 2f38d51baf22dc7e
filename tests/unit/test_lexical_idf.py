"""Scores across repositories: each repository's index searched with ``idf.shared``'s weights
scores a document as one index holding every repository would (same lengths), where each
index's own idf would not."""

from __future__ import annotations

import tantivy
from tantivy import Occur, Query

from relore.serve.lexical import generations, idf, query, schema

SMALL = [
    "alpha beta gamma delta",
    "beta beta gamma zeta",
    "alpha alpha zeta eta",
    "eta eta eta eta",
]
LARGE = [
    "alpha theta theta iota",
    "beta iota iota kappa",
    "kappa kappa kappa kappa",
    "theta iota kappa beta",
    "zeta zeta beta beta",
    "iota iota iota iota",
]
WORDS = ["alpha", "beta", "zeta"]


def _searcher(path, texts: list[str]) -> tantivy.Searcher:
    path.mkdir()
    index = generations.open_index(path)
    writer = index.writer(heap_size=20_000_000, num_threads=1)
    for number, text in enumerate(texts):
        doc = tantivy.Document()
        doc.add_text(schema.TEXT, text)
        doc.add_text(schema.DOCUMENT, text)
        doc.add_unsigned(schema.THREAD, number)
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index.searcher()


def _scores(searcher, weights=None) -> dict[str, float]:
    asked = Query.boolean_query([(Occur.Must, query.text_query(WORDS, 1, weights))])
    hits = searcher.search(asked, limit=20).hits
    return {searcher.doc(address)[schema.DOCUMENT][0]: score for score, address in hits}


def test_each_index_weighted_scores_as_one_shared_index_would(tmp_path):
    small = _searcher(tmp_path / "small", SMALL)
    large = _searcher(tmp_path / "large", LARGE)
    shared = _scores(_searcher(tmp_path / "shared", SMALL + LARGE))
    weights = idf.shared([small, large], WORDS)
    merged = {**_scores(small, weights[0]), **_scores(large, weights[1])}
    assert merged.keys() == shared.keys()
    for text, score in merged.items():
        assert abs(score - shared[text]) < 1e-4, (text, score, shared[text])
    # each index's own idf puts the two repositories on different scales
    alone = {**_scores(small), **_scores(large)}
    assert any(abs(alone[t] - shared[t]) > 0.05 for t in shared)


def test_a_repository_holding_none_of_the_words_gets_no_weights_and_none_is_skipped(tmp_path):
    small = _searcher(tmp_path / "small", SMALL)
    weights = idf.shared([small, None], ["kappa", "alpha"])
    assert weights[1] is None
    assert set(weights[0]) == {"alpha"}  # kappa: no document of it holds the word
    assert abs(weights[0]["alpha"] - 1.0) < 1e-9  # the only index searched: its own idf
