"""The route a query takes and the order a fused page shows (serve/semantic/fusion.py)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from relore.serve.search import SearchRequest
from relore.serve.semantic import fusion


def _request(text: str, **more) -> SearchRequest:
    terms = tuple(text.lower().split())
    return SearchRequest(text=text, terms=terms, repo="acme/x", repo_id=1, **more)


def _hit(number: int, doc: str) -> dict:
    return {"number": number, "document_id": doc}


def test_a_question_is_fused_and_an_error_or_short_query_is_lexical_first():
    assert fusion.route(_request("why does the pool hang"), failure=False).fused
    assert not fusion.route(_request("ValueError: bad"), failure=True).fused
    assert not fusion.route(_request("pool hang"), failure=False).fused


def test_a_filter_meaning_cannot_apply_is_never_bypassed_by_the_semantic_leg():
    chosen = fusion.route(_request("why does the pool hang", file=("a.py",)), failure=False)
    assert (chosen.fused, chosen.not_asked is not None) == (False, True)


def test_a_search_across_every_repository_does_not_ask_meaning():
    request = SearchRequest(text="why does the pool hang", terms=("why", "pool", "hang"))
    assert fusion.route(request, failure=False).not_asked


def test_relore_semantic_off_turns_the_leg_off(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(fusion, "ENABLED", False)
    assert (
        "RELORE_SEMANTIC=off" in fusion.route(_request("why does it hang"), failure=False).not_asked
    )


def _leg(*threads: int) -> list[fusion.Ranked]:
    return [fusion.Ranked(t, f"d{t}", 1.0) for t in threads]


def test_a_thread_both_legs_found_outranks_threads_one_leg_found_and_ties_go_to_words():
    order = fusion.fuse({"words": _leg(7, 8), "meaning": _leg(9, 8)}, fusion.Weights(1, 1))
    assert [t for t, _ in order] == [8, 7, 9]
    scores = dict(order)
    assert scores[8] > scores[7] == scores[9]


@pytest.mark.parametrize("shape", sorted(fusion.WEIGHTS))
def test_fusion_never_drops_a_thread_both_legs_rank_in_their_top_3(shape: str):
    """The worst case for a thread third in words and in meaning: every other thread of the
    two legs' first 50 placed to beat it (distinct threads, each leg's own order), and the
    whole threads' leg ranking 50 other threads and never it."""
    weights = fusion.WEIGHTS[shape]
    for both in ((3, 3), (1, 3), (3, 1), (2, 3)):
        words = [100 + i for i in range(50)]
        meaning = [200 + i for i in range(50)]
        words[both[0] - 1] = meaning[both[1] - 1] = 1
        # the threads ranked above it in either leg are also the other leg's next ones
        for rank in range(both[0] - 1):
            meaning[both[1] + rank] = words[rank]
        legs = {"words": _leg(*words), "meaning": _leg(*meaning), "file": _leg(*words)}
        legs["thread"] = _leg(*(300 + i for i in range(50)))
        order = fusion.fuse(legs, weights)
        assert 1 in [t for t, _ in order[:10]], (shape, both)


def test_a_leg_weighed_zero_orders_nothing_but_its_threads_are_not_invented():
    order = fusion.fuse({"words": _leg(1, 2), "file": _leg(3)}, fusion.Weights(1, 1, 0))
    assert [t for t, _ in order] == [1, 2]


@pytest.mark.parametrize(
    ("text", "named", "expected"),
    [
        ("why does the pool hang after a fork?", (), "question"),
        ("How do I turn caching off in training", (), "question"),
        ("Turn the decoder cache off under activation checkpointing.", (), "description"),
        ("src/a/b.py: why is the cache off?", ("src/a/b.py",), "path_description"),
    ],
)
def test_a_query_is_shaped_as_a_question_a_description_or_a_file_described(
    text: str, named: tuple, expected: str
):
    assert fusion.shape(text, named) == expected


@pytest.mark.parametrize("shape", ["question", "description"])
def test_without_meaning_a_question_or_description_leans_on_whole_threads(shape: str):
    """Tier off, the thread whose turns hold the words between them (first in the whole
    threads' leg, fifth by its best document) outranks the one whose single document ranks
    first and whose whole text ranks tenth."""
    weights = fusion.words_only(shape, fusion.WEIGHTS[shape])
    assert weights.words_share == 0.0 and weights.thread > weights.words
    order = fusion.fuse(
        {"words": _leg(2, 3, 4, 5, 1), "thread": _leg(1, *range(6, 14), 2)}, weights
    )
    assert next(t for t, _ in order) == 1


def test_a_file_described_keeps_its_weights_without_meaning_and_admits_any_word():
    weights = fusion.WEIGHTS["path_description"]
    alone = fusion.words_only("path_description", weights)
    assert alone.words_share == 0.0 and (alone.words, alone.file) == (weights.words, weights.file)


# -- a fused page asks meaning and the words at once (serve/fused.py) --------------------------

# how long a stub leg waits for the other to start: far past any scheduling delay, so only a
# page that asks the legs one after the other runs it out
_OVERLAP_WAIT_S = 20


class _Prepared:
    """What fused.page's legs read of a prepared request."""

    named_files = ()
    lexemes = ("cache", "decoder", "checkpointing")
    searcher = None  # an index of its own (not a view of the shared one)


def _stub_word_legs(monkeypatch, started=None) -> list:
    """fused's index walks replaced: each records the share of the lexemes it was asked with
    (and sets ``started``); returns the record."""
    from relore.serve import fused

    shares = []

    def walk(prepared, share, files):
        if started is not None:
            started.set()
        shares.append(share)
        return None

    monkeypatch.setattr(fused, "_walk", walk)
    monkeypatch.setattr(fused, "_strict_count", lambda prepared: 0)
    monkeypatch.setattr(fused, "_whole_threads", lambda prepared, share: [])
    return shares


def test_a_fused_page_walks_the_index_only_after_meaning_answered(monkeypatch):
    """The question is embedded and its neighbours read while the index is walked: meaning
    waiting on the walk to start must not wait in vain."""
    from relore.serve import fused

    started = threading.Event()
    _stub_word_legs(monkeypatch, started)
    seen = {}

    async def meaning(cur, request, floor=0.0):
        seen["walked_meanwhile"] = await asyncio.to_thread(started.wait, _OVERLAP_WAIT_S)
        return []

    monkeypatch.setattr(fusion, "meaning", meaning)
    request = _request("why does the decoder keep its cache under checkpointing")
    found, _, _, _ = asyncio.run(fused._legs(None, request, [_Prepared()], "question", False))
    assert found == [] and seen == {"walked_meanwhile": True}


@pytest.mark.parametrize(
    ("shape", "shares"),
    [
        # a question's words admit half its lexemes beside meaning, any one without it
        ("question", [0.5, fusion.WORDS_ONLY_SHARE]),
        # a description walks the same either way: walked once
        ("description", [0.0]),
    ],
)
def test_without_meaning_a_page_keeps_the_walks_asked_for_meaning(monkeypatch, shape, shares):
    """Walked beside meaning with the weights meaning answers under, a page meaning could not
    answer is walked again when its words-only weights ask other walks."""
    from relore.serve import fused
    from relore.serve.semantic import nearest

    walked = _stub_word_legs(monkeypatch)

    async def meaning(cur, request, floor=0.0):
        return nearest.Off("nothing is embedded yet")

    monkeypatch.setattr(fusion, "meaning", meaning)
    request = _request("the decoder keeps its cache under checkpointing")
    found, weights, _, _ = asyncio.run(fused._legs(None, request, [_Prepared()], shape, False))
    assert isinstance(found, nearest.Off)
    assert weights == fusion.words_only(shape, fusion.WEIGHTS[shape])
    assert walked == shares


# -- a file described: merged pull requests first among the page's first threads ------------


def _hit(number: int, kind: str, state: str) -> dict:
    return {"number": number, "kind": kind, "state": state}


def test_a_file_described_page_puts_its_first_merged_pull_requests_ahead_of_issues():
    """A "why is this code like this" page answered by an issue or an open pull request
    above the merged one that made the change: the merged ones of the first five lead."""
    hits = [
        _hit(1, "pr", "open"),
        _hit(2, "issue", "closed"),
        _hit(3, "pr", "merged"),
        _hit(4, "issue", "open"),
        _hit(5, "pr", "merged"),
        _hit(6, "pr", "merged"),  # past the first five: stays where fusion put it
    ]
    reordered = fusion.merged_first(hits, "path_description")
    assert [h["number"] for h in reordered] == [3, 5, 1, 2, 4, 6]


@pytest.mark.parametrize("shape", ["question", "description"])
def test_a_question_or_description_page_keeps_its_fused_order(shape: str):
    """Merged first lowered the change slice's dev MRR: a description keeps fusion's order."""
    hits = [_hit(1, "issue", "closed"), _hit(2, "pr", "merged")]
    assert fusion.merged_first(hits, shape) == hits
