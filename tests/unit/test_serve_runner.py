"""``relored serve`` uses every core by default (the daemons are stateless), within what the
database's connections allow."""

from __future__ import annotations

import pytest

from relore.operate.parser import build_parser
from relore.serve import runner


@pytest.mark.parametrize(("cores", "workers"), [(None, 1), (1, 1), (2, 2), (6, 6), (32, 8)])
def test_serve_runs_a_worker_per_core_by_default_at_most_the_cap(monkeypatch, cores, workers):
    monkeypatch.setattr(runner.os, "cpu_count", lambda: cores)
    assert runner.default_workers() == workers


def test_serve_without_workers_leaves_the_count_to_the_cores():
    assert build_parser().parse_args(["serve"]).workers is None
    assert build_parser().parse_args(["serve", "--workers", "1"]).workers == 1
