"""The signal marts have one list (macros/signal_marts.sql): a signal mart left out of it would
go uncounted by repo_status and serve's status and unchecked by the data test."""

from __future__ import annotations

from pathlib import Path

from fixtures import signal_marts

MARTS = Path(__file__).resolve().parents[2] / "models" / "marts"


def test_a_signal_mart_missing_from_the_one_list_is_named():
    built_as_signals = {
        path.stem
        for path in MARTS.glob("thread_*.sql")
        if "signal_mart_config(" in path.read_text(encoding="utf-8")
    }
    listed = signal_marts.names()
    assert len(set(listed)) == len(listed), "a signal mart listed twice"
    assert built_as_signals == set(listed)
