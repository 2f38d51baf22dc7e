"""The index's filter-only walk (serve/lexical/query.threads_newest_first) over a small index
built in memory: what it reads, and how many searches it costs."""

from __future__ import annotations

import tantivy

from relore.serve.lexical import query, schema


def _searcher(documents: int) -> tantivy.Searcher:
    """``documents`` documents of 7 threads, created one second apart, all carrying one file."""
    index = tantivy.Index(schema.SCHEMA)
    index.register_tokenizer(schema.TOKENIZER, schema.analyzer())
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for n in range(documents):
        row = {
            "lexemes": "cache",
            "document_id": f"comment:{n}",
            "thread_number": n % 7 + 1,
            "created": n,
            "trust_tier": "authoritative",
            "author": "ada",
            "github_state": "closed",
            "is_merged": False,
            "kind": "pr",
        }
        writer.add_document(schema.document(row, {schema.FILE: {"a.py"}}))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index.searcher()


class _Counting:
    """The searcher, counting its searches and the hits each one collected."""

    def __init__(self, searcher: tantivy.Searcher) -> None:
        self._searcher, self.collected = searcher, []

    def search(self, asked, limit, offset=0, **kwargs):
        self.collected.append(limit + offset)
        return self._searcher.search(asked, limit=limit, offset=offset, **kwargs)

    def __getattr__(self, name):
        return getattr(self._searcher, name)


def _walk(searcher, max_documents: int) -> query.Threads:
    named = query.Filters(tiers=("authoritative",), files=("a.py",))
    asked = query.build(searcher, [], 0, named)
    return query.threads_newest_first(searcher, asked, 3, 2, max_documents)


def test_a_long_filter_walk_searches_again_from_the_top_at_every_step(monkeypatch):
    monkeypatch.setattr(query, "WALK_STEP", 4)
    searcher = _Counting(_searcher(60))
    walked = _walk(searcher, 40)
    # every thread, newest first, each by its two newest documents; 40 read of 60: a bound
    assert walked.page == [
        (4, ["comment:59", "comment:52"]),
        (3, ["comment:58", "comment:51"]),
        (2, ["comment:57", "comment:50"]),
    ]
    assert walked.total == 7 and walked.lower_bound
    # a step, then the rest at once: not 10 steps collecting 4 + 8 + ... + 40 = 220
    assert searcher.collected == [4, 40]


def test_a_walk_that_reads_every_match_says_its_total_is_a_bound(monkeypatch):
    monkeypatch.setattr(query, "WALK_STEP", 4)
    for documents, cap, bound in ((3, 40, False), (39, 40, False), (40, 40, True), (41, 40, True)):
        searcher = _Counting(_searcher(documents))
        walked = _walk(searcher, cap)
        assert walked.lower_bound is bound, (documents, cap)
        assert walked.total == min(documents, 7)
        assert len(searcher.collected) == (1 if documents < 4 else 2)
    # the cap is read in whole steps, as it always was: 42 reads 44
    searcher = _Counting(_searcher(43))
    assert not _walk(searcher, 42).lower_bound and searcher.collected == [4, 44]
