"""The quality gate's comparison (benchmarks/quality/gate.py), on figures made up here, and
the recorded figures it compares against (benchmarks/quality/gate.json).

The gate itself, measured end to end, is tests/integration/test_quality_gate.py.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "quality" / "gate.py"
_SPEC = importlib.util.spec_from_file_location("quality_gate", _PATH)
gate = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(gate)

CORPUS = {"path": "../shared/corpus/threads.jsonl", "threads": 3, "sha256": "ab" * 32}


def _figures(value: float = 0.5) -> dict:
    """Every gated slice, each metric ``value``, over 100 items."""
    figures: dict = {system: {} for system in gate.GATED}
    for system, row in gate.gated():
        figures[system][row] = {"n": 100, "recall_at_10": value, "mrr": value}
    return {"corpus": dict(CORPUS), "figures": figures}


def _with(figures: dict, system: str, row: str, metric: str, value: float) -> dict:
    changed = copy.deepcopy(figures)
    changed["figures"][system][row][metric] = value
    return changed


def test_the_gate_compares_every_slice_of_the_runner_tier_on_and_off():
    pairs = gate.gated()
    assert {row for _, row in pairs} == set(gate.run.ROWS)
    for row in gate.run.ROWS:
        # inflight is not a search: the tier cannot be off for it (run.py asks it once)
        systems = {s for s, r in pairs if r == row}
        expected = {"relore"} if row.startswith("inflight/") else {"relore", "relore:lexical"}
        assert systems == expected, row


def test_a_slice_below_its_recorded_figure_fails_naming_slice_metric_and_both_figures(capsys):
    recorded = _figures(0.45)
    measured = _with(recorded, "relore:lexical", "why/description", "mrr", 0.44)
    drops, broken, _ = gate.compare(recorded, measured)
    assert drops == [
        "why/description [relore:lexical] MRR: recorded 0.450, measured 0.440 "
        f"(dropped 0.010, tolerance {gate.TOLERANCE})"
    ]
    assert not broken
    assert gate.report(recorded, measured) == 1
    err = capsys.readouterr().err
    assert "DROPPED: why/description [relore:lexical] MRR" in err
    assert gate.RECORD in err  # how to record the figure, when the drop is meant


@pytest.mark.parametrize(
    ("row", "metric", "recorded", "measured"),
    [
        # the largest slice (116 items): one first target from rank 1 to 2
        ("rationale/words", "mrr", 1.0, 1 - 0.5 / 116),
        # one of a paraphrase's five targets leaving the page (103 items)
        ("paraphrase/question", "recall_at_10", 0.6, 0.6 - 1 / (5 * 103)),
    ],
)
def test_one_item_moving_in_the_largest_slices_fails(row, metric, recorded, measured):
    figures = _figures(0.5)
    figures["figures"]["relore"][row][metric] = recorded
    moved = _with(figures, "relore", row, metric, round(measured, gate.DIGITS))
    drops, _, _ = gate.compare(figures, moved)
    assert [d.split(":")[0] for d in drops] == [f"{row} [relore] {gate.NAMES[metric]}"]


def test_a_drop_within_the_tolerance_holds_and_one_just_past_it_fails():
    recorded = _figures(0.5)
    within = _with(recorded, "relore", "change/description", "recall_at_10", 0.5 - gate.TOLERANCE)
    assert gate.compare(recorded, within) == ([], [], [])
    past = _with(recorded, "relore", "change/description", "recall_at_10", 0.498)
    assert len(gate.compare(recorded, past)[0]) == 1


def test_a_slice_missing_from_the_recorded_figures_fails_loudly_rather_than_passing(capsys):
    measured = _figures(0.5)
    recorded = copy.deepcopy(measured)
    del recorded["figures"]["relore:lexical"]["paraphrase/question"]
    drops, broken, _ = gate.compare(recorded, measured)
    assert not drops
    assert broken == ["paraphrase/question [relore:lexical]: no recorded figure"]
    assert gate.report(recorded, measured) == 2
    assert "NOT COMPARABLE: paraphrase/question [relore:lexical]" in capsys.readouterr().err


def test_a_slice_the_run_did_not_measure_fails_rather_than_passing():
    recorded = _figures(0.5)
    measured = copy.deepcopy(recorded)
    del measured["figures"]["relore"]["inflight/indexed"]
    _, broken, _ = gate.compare(recorded, measured)
    assert broken == [
        "inflight/indexed [relore]: no item measured (the slice has no labelled items)"
    ]


def test_figures_over_another_number_of_items_or_another_corpus_are_not_compared():
    recorded = _figures(0.5)
    measured = copy.deepcopy(recorded)
    measured["figures"]["relore"]["failure/rerun"]["n"] = 99
    measured["corpus"]["sha256"] = "cd" * 32
    _, broken, _ = gate.compare(recorded, measured)
    assert len(broken) == 2
    assert broken[0].startswith("the corpus (../shared/corpus/threads.jsonl, sha256 cdcdcdcdcdcd)")
    assert broken[1] == (
        "failure/rerun [relore]: 99 items measured, the figures were recorded over 100"
    )


def test_a_recorded_slice_that_is_no_longer_a_slice_fails():
    recorded = _figures(0.5)
    recorded["figures"]["relore"]["failure/gone"] = {"n": 1, "recall_at_10": 1, "mrr": 1}
    _, broken, _ = gate.compare(recorded, _figures(0.5))
    assert broken == ["failure/gone [relore]: recorded but no longer a slice"]


def test_a_figure_that_rose_holds_and_asks_to_be_recorded(capsys):
    recorded = _figures(0.5)
    measured = _with(recorded, "relore", "why/description", "recall_at_10", 0.6)
    drops, broken, gains = gate.compare(recorded, measured)
    assert (drops, broken) == ([], [])
    assert gains == ["why/description [relore] R@10: recorded 0.500, measured 0.600 (rose 0.100)"]
    assert gate.report(recorded, measured) == 0
    assert f"record it ({gate.RECORD})" in capsys.readouterr().out


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(gate.FIGURES.read_text())


def test_gate_json_records_every_slice_with_its_command_and_commit(recorded):
    assert recorded["command"] == gate.RECORD
    assert recorded["measured_at"]["commit"] and recorded["tolerance"] == gate.TOLERANCE
    assert recorded["corpus"]["threads"] == 668
    pairs = {(s, r) for s, rows in recorded["figures"].items() for r in rows}
    assert pairs == set(gate.gated())
    for system, row in pairs:
        figure = recorded["figures"][system][row]
        assert figure["n"] > 0 and set(figure) == {"n", "recall_at_10", "mrr"}, (system, row)
        for metric in gate.METRICS:
            assert 0 <= figure[metric] <= 1
            assert figure[metric] == round(figure[metric], gate.DIGITS), (system, row, metric)


def test_gate_json_is_recorded_over_the_corpus_in_this_checkout(recorded):
    assert recorded["corpus"] == gate.corpus_facts()
