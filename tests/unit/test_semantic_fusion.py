"""The route a query takes and the order a fused page shows (serve/semantic/fusion.py)."""

from __future__ import annotations

import pytest

from relore.serve.search import SearchRequest
from relore.serve.semantic import fusion
from relore.serve.semantic.nearest import Near


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


def test_a_thread_both_legs_found_outranks_threads_one_leg_found_and_ties_go_to_words():
    lexical = [_hit(7, "a"), _hit(8, "b")]
    near = [Near(9, "c", 0.8), Near(8, "d", 0.7)]
    entries, scores = fusion.fuse(lexical, near, 10)
    assert [e["number"] if k == "lexical" else e.thread_number for k, e in entries] == [
        8,
        7,
        9,
    ]
    assert scores[8] > scores[7] == scores[9]


def test_a_threads_lexical_hits_stay_together_and_the_page_stops_at_its_limit():
    lexical = [_hit(1, "a"), _hit(2, "b"), _hit(1, "c")]
    entries, _ = fusion.fuse(lexical, [Near(3, "d", 0.9)], 3)
    assert [(k, e["document_id"] if k == "lexical" else e.document_id) for k, e in entries] == [
        ("lexical", "a"),
        ("lexical", "c"),
        ("semantic", "d"),
    ]
