"""The search results cache: bounded, off when asked, and refusing a setting it cannot use."""

from __future__ import annotations

import pytest

from relore.serve.lexical import results


def test_the_least_recently_used_result_is_the_one_dropped():
    cache = results.Results(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (1, 3)
    assert (cache.hits, cache.misses) == (3, 1)


def test_zero_entries_keeps_nothing():
    cache = results.Results(0)
    cache.put("a", 1)
    assert cache.get("a") is None


@pytest.mark.parametrize("raw", ["-1", "many", "1e3", str(results.MAX_ENTRIES + 1)])
def test_a_setting_that_is_not_a_count_is_refused_with_its_range(raw):
    with pytest.raises(ValueError, match="RELORE_SEARCH_CACHE must be a whole number"):
        results.entries_from_env({"RELORE_SEARCH_CACHE": raw})


def test_unset_or_blank_is_the_default_and_zero_is_off():
    assert results.entries_from_env({}) == results.DEFAULT_ENTRIES
    assert results.entries_from_env({"RELORE_SEARCH_CACHE": " "}) == results.DEFAULT_ENTRIES
    assert results.entries_from_env({"RELORE_SEARCH_CACHE": "0"}) == 0
