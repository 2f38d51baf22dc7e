"""The shared index read through views (serve/lexical/shared.py), over a small index built in
memory: two members whose thread numbers and words collide."""

from __future__ import annotations

import pytest
import tantivy

from relore.serve.lexical import generations, idf, query, schema
from relore.serve.lexical.shared import View, held_doc_freq, held_docs


def _row(number: int, lexemes: str, document: str) -> dict:
    return {
        "lexemes": lexemes,
        "document_id": document,
        "thread_number": number,
        "created": number,
        "trust_tier": "reported",
        "author": "ada",
        "github_state": "open",
        "is_merged": False,
        "kind": "issue",
    }


def _shared() -> tantivy.Searcher:
    """Member 1: threads 1 and 2 ("cache" once, "lantern" in 2); member 2: thread 1 with
    "cache" and 9 more "cache" threads (the word is frequent there, rare in member 1)."""
    index = tantivy.Index(schema.SCHEMA)
    index.register_tokenizer(schema.TOKENIZER, schema.analyzer())
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    writer.add_document(schema.document(_row(1, "cache miss", "a:1"), None, 1))
    writer.add_document(schema.document(_row(2, "lantern", "a:2"), None, 1))
    writer.add_document(schema.document(_row(1, "cache miss", "b:1"), None, 2))
    for n in range(2, 11):
        writer.add_document(schema.document(_row(n, "cache", f"b:{n}"), None, 2))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index.searcher()


def _threads(view: View, lexemes: list[str]) -> list[int]:
    asked = query.build(view, lexemes, 1, query.Filters(tiers=("reported",)))
    return [h.thread for h in query.ranked(view, asked, 20, 3).hits]


def test_a_members_view_never_returns_another_members_thread_of_the_same_number():
    searcher = _shared()
    one = View(searcher, (1,), every=False)
    assert _threads(one, ["cache"]) == [1]
    assert (
        query.best_in_thread(one, query.build(one, ["miss"], 1, query.Filters(("reported",))), 1)
        == "a:1"
    )
    two = View(searcher, (2,), every=False)
    assert sorted(_threads(two, ["cache"])) == list(range(1, 11))


def test_a_view_of_several_members_keeps_their_thread_1_apart():
    searcher = _shared()
    both = View(searcher, (1, 2), every=True)
    keys = _threads(both, ["miss"])
    assert sorted(keys) == [schema.thread_key(1, 1), schema.thread_key(2, 1)]


def test_a_member_alone_is_scored_by_its_own_idf_not_the_shared_indexs():
    """ "cache" is in 1 of member 1's 2 documents and in all 10 of member 2's: the shared
    index's idf would score it as frequent in member 1 too."""
    searcher = _shared()
    one = View(searcher, (1,), every=False)
    assert (held_docs(one), held_doc_freq(one, schema.TEXT, "cache")) == (2, 1)
    weights = idf.own(one, ["cache"])
    own = idf.idf(1, 2) / idf.idf(searcher.doc_freq(schema.TEXT, "cache"), searcher.num_docs)
    assert weights == {"cache": own} and own > 1.0
    # every member in view: its statistics are the shared index's, no weight needed
    assert idf.own(View(searcher, (1, 2), every=True), ["cache"]) is None


@pytest.mark.parametrize("raw", ["-1", "lots", "1e3"])
def test_a_shared_limit_that_is_not_a_count_is_refused_naming_the_variable(raw):
    with pytest.raises(ValueError, match="RELORE_SHARED_INDEX_DOCUMENTS"):
        generations.shared_limit({"RELORE_SHARED_INDEX_DOCUMENTS": raw})


def test_a_shared_limit_of_zero_turns_sharing_off_and_blank_is_the_default():
    assert generations.shared_limit({"RELORE_SHARED_INDEX_DOCUMENTS": "0"}) == 0
    assert generations.shared_limit({"RELORE_SHARED_INDEX_DOCUMENTS": " "}) == (
        generations.SHARED_LIMIT
    )
