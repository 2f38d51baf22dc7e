"""The retrieval-quality metrics (benchmarks/quality/metrics.py), on hand-computed pages."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "quality" / "metrics.py"
_SPEC = importlib.util.spec_from_file_location("quality_metrics", _PATH)
metrics = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(metrics)

A, B, C, D = (("o/r", n) for n in (1, 2, 3, 4))


def _threads(*numbers: int) -> list[tuple[str, int]]:
    return [("o/r", n) for n in numbers]


def test_a_thread_answered_twice_counts_once_in_recall_and_rank():
    scored = metrics.score([A, A, B], [B])
    assert scored["threads"] == [A, B]
    assert scored["rank"] == 2  # the second thread, not the third hit
    assert scored["recall"] == 1.0
    assert scored["rr"] == 0.5


def test_a_chatty_thread_is_capped_and_the_page_fills_from_further_down():
    # five hits from thread 1, then threads 2..10: the page keeps 3 of thread 1 and the
    # next 7 threads (2..8); thread 8 is the 8th thread, thread 9 is off the page
    hits = _threads(1, 1, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
    assert metrics.page(hits) == _threads(1, 1, 1, 2, 3, 4, 5, 6, 7, 8)
    assert metrics.score(hits, _threads(8))["rank"] == 8
    assert metrics.score(hits, _threads(9)) == {
        "threads": _threads(1, 2, 3, 4, 5, 6, 7, 8),
        "rank": None,
        "recall": 0.0,
        "recall_at_5": 0.0,
        "rr": 0.0,
    }


def test_a_target_past_the_tenth_hit_is_a_miss():
    hits = _threads(*range(1, 12))
    assert metrics.score(hits, _threads(10))["rr"] == pytest.approx(0.1)
    assert metrics.score(hits, _threads(11))["recall"] == 0.0


def test_recall_is_the_share_of_targets_on_the_page_not_a_hit_or_miss():
    scored = metrics.score([C, A], [A, B, C, D])
    assert scored["recall"] == 0.5
    assert scored["rank"] == 1


def test_mrr_and_recall_average_over_items_including_misses():
    scores = [
        metrics.score([A], [A]),  # rr 1, recall 1
        metrics.score([B, A], [A, C]),  # rr 1/2, recall 1/2
        metrics.score([B], [D]),  # rr 0, recall 0
    ]
    summary = metrics.summary(scores)
    assert summary["n"] == 3
    assert summary["mrr"] == pytest.approx(0.5)
    assert summary["recall_at_10"] == pytest.approx(0.5)


def test_an_empty_slice_reports_no_figure_rather_than_zero():
    assert metrics.summary([]) == {"n": 0, "recall_at_10": None, "recall_at_5": None, "mrr": None}


def test_repository_names_compare_without_case():
    assert metrics.thread_key("HuggingFace/Transformers", "12") == ("huggingface/transformers", 12)
    hits = [metrics.thread_key("HuggingFace/Transformers", 12)]
    assert metrics.score(hits, [metrics.thread_key("huggingface/transformers", 12)])["rank"] == 1


def test_an_item_without_targets_is_refused_not_scored_perfect():
    with pytest.raises(ValueError):
        metrics.score([A], [])


def test_a_hit_showing_none_of_the_query_words_is_a_wasted_slot():
    query = {"tokenizer", "pad"}
    shown = [{"thank"}, {"pad", "side"}, set(), {"tokenizer"}]
    assert metrics.wasted(shown, query) == [True, False, True, False]
    # a query with no content words wastes nothing (there is nothing a snippet could show)
    assert metrics.wasted(shown, set()) == [False] * 4


def test_the_wasted_share_is_over_every_hit_and_pages_average_their_length():
    scores = [
        {"recall": 1.0, "rr": 1.0, "wasted": [False, True]},
        {"recall": 0.0, "rr": 0.0, "wasted": [True, True, False, False]},
    ]
    figures = metrics.summary(scores)
    assert figures["wasted_share"] == pytest.approx(3 / 6)
    assert figures["hits_per_page"] == pytest.approx(3.0)
    # systems that show no text have no slot figures
    assert "wasted_share" not in metrics.summary([{"recall": 1.0, "rr": 1.0}])
