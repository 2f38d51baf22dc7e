"""The order of a precedent page (serve/precedent/rank.py), without an index: the legs'
rankings fused, merged pull requests first among comparable ones, issues never."""

from __future__ import annotations

import asyncio
import threading

from relore.contract import limits
from relore.serve import search
from relore.serve.precedent import rank


def _legs(words=None, evidence=None, meaning=None) -> rank.Legs:
    return rank.Legs(
        words={n: rank.Worded(s, f"opening_post:{n}") for n, s in (words or {}).items()},
        evidence=evidence or {},
        meaning={n: (s, f"opening_post:{n}") for n, s in (meaning or {}).items()},
    )


def test_a_strong_unmerged_pull_request_follows_the_comparable_merged_ones():
    legs = _legs(words={1: 9.0, 2: 8.0, 3: 10.0})
    order = [f.number for f in rank.fuse(legs, {1: "merged", 2: "merged", 3: "closed"})]
    assert order == [1, 2, 3]


def test_a_weak_merged_pull_request_follows_a_strong_unmerged_one():
    legs = _legs(words={1: 9.0, 3: 10.0, 5: 1.0})
    order = [f.number for f in rank.fuse(legs, {1: "merged", 3: "closed", 5: "merged"})]
    assert order == [1, 3, 5]


def test_an_issue_the_legs_found_never_reaches_the_page():
    legs = _legs(words={4: 20.0, 1: 5.0}, meaning={4: 0.9})
    assert [f.number for f in rank.fuse(legs, {1: "merged"})] == [1]


def test_every_leg_that_ranked_a_pull_request_is_named_with_its_rank():
    legs = _legs(words={1: 5.0, 2: 4.0}, evidence={2: {"a.py"}, 7: {"a.py"}}, meaning={2: 0.5})
    fused = {f.number: f for f in rank.fuse(legs, {1: "merged", 2: "merged", 7: "merged"})}
    assert fused[2].ranks == {"words": 2, "files": 1, "meaning": 1}
    assert fused[7].ranks == {"files": 2} and fused[1].ranks == {"words": 1}
    assert next(iter(fused)) == 2  # three legs over one


def test_search_kind_precedent_caps_at_the_same_number_precedent_does():
    assert search.PRECEDENT_LIMIT == limits.MAX_PRECEDENT == 5


def test_a_pull_request_whose_turns_share_the_description_outranks_one_wordy_document():
    """The whole threads' leg (a pull request as one text) outweighs the best single
    document's, and a hit it found says it matched by the words."""
    legs = _legs(words={1: 5.0, 4: 4.0})
    legs.threads = {2: 9.0, 3: 8.0, 5: 7.0, 6: 6.0, 1: 2.0}
    fused = rank.fuse(legs, dict.fromkeys((1, 2, 3, 4, 5, 6), "merged"))
    assert [f.number for f in fused][:2] == [2, 1]
    assert rank.matched_by(fused[0].ranks) == ["words"]
    assert rank.matched_by(fused[1].ranks) == ["words"]


# -- the legs asked at once (serve/precedent/page.py) --------------------------------------------


def test_a_capped_words_walk_of_either_state_goes_unsaid(monkeypatch):
    """The legs run side by side and each says whether it stopped at its cap: the page says
    its total is a lower bound when any did, whichever finished last."""
    from relore.serve.precedent import page

    asked = {"lexemes": ["cache"], "files": [], "symbols": []}
    for capped_state in ("merged", "closed"):
        monkeypatch.setattr(
            rank,
            "words",
            lambda s, lex, tiers, state, legs, weights=None, c=capped_state: state == c,
        )
        monkeypatch.setattr(rank, "threads", lambda s, lex, legs: False)
        monkeypatch.setattr(rank, "evidence", lambda s, f, sy, tiers, legs: False)
        legs = rank.Legs()
        asyncio.run(page._walk(None, None, asked, legs))
        assert legs.capped, capped_state


def test_a_precedent_page_asks_meaning_only_after_the_index_was_walked(monkeypatch):
    """The description is embedded and its neighbours read while the index is walked."""
    from relore.serve.precedent import page

    started = threading.Event()
    seen = {}

    async def walk(searcher, threads, asked, legs):
        started.set()

    async def meaning(cur, repo_id, request, legs):
        seen["walked_meanwhile"] = await asyncio.to_thread(started.wait, 20)
        return {"state": "answered", "threads": 0}

    class Cursor:
        async def execute(self, sql, params=None):
            self.sql = sql

        async def fetchone(self):
            if self.sql is page.read.NAMED:
                return {"paths": [], "symbols": []}
            return {"lexemes": ["cache"], "files": [], "symbols": []}

        async def fetchall(self):
            return []

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return False

    class Connection:
        def cursor(self, row_factory=None):
            return Cursor()

    class Indexes:
        async def fresh(self, conn, repo_id, resolved):
            return None

        def reader(self, repo_id):
            return type("Reader", (), {"thread_searcher": lambda self: None})()

    async def require(conn, repo):
        return 1

    monkeypatch.setattr(page, "_walk", walk)
    monkeypatch.setattr(page, "_meaning", meaning)
    monkeypatch.setattr(page.repos, "require", require)
    monkeypatch.setattr(page.store, "for_connection", lambda conn: Indexes())
    request = page.PrecedentRequest(text="keep the cache", repo="acme/x", terms=("cache",))
    asyncio.run(page.precedent(Connection(), request))
    assert seen == {"walked_meanwhile": True}


def test_a_closed_issue_takes_a_place_in_the_words_walk(monkeypatch):
    """The words leg walks closed pull requests' documents only: an issue's documents would
    take places among its first DOCUMENTS (and cost their scoring) only to be dropped."""
    import tantivy

    from relore.serve.lexical import schema

    index = tantivy.Index(schema.SCHEMA)
    index.register_tokenizer(schema.TOKENIZER, schema.analyzer())
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    threads = {1: ("issue", "closed", False), 2: ("pr", "closed", False), 3: ("pr", "closed", True)}
    for number, (kind, state, merged) in threads.items():
        row = {
            "lexemes": "cache cache cache" if kind == "issue" else "cache",
            "document_id": f"opening_post:{number}",
            "thread_number": number,
            "created": number,
            "trust_tier": "authoritative",
            "author": "ada",
            "github_state": state,
            "is_merged": merged,
            "kind": kind,
        }
        writer.add_document(schema.document(row))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    monkeypatch.setattr(rank, "DOCUMENTS", 1)
    legs = rank.Legs()
    for state in ("merged", "closed"):
        rank.words(index.searcher(), ["cache"], ("authoritative",), state, legs)
    assert set(legs.words) == {2, 3}
