"""The retrieval-quality gate (#36), the real thing: benchmarks/quality/gate.py lands the whole
corpus into its own embedded Postgres, builds, embeds and asks every labelled item of every
slice of the service in process, tier on and off, and fails when a slice's R@10 or MRR falls
below the figure recorded in benchmarks/quality/gate.json.

The gate runs once a session (a child process of this venv's Python, as a user runs it),
started in the background when the session starts; run.py's and fusion_grid.py's toy runs go
over the database it leaves, so the suite lands, builds and embeds the corpus once for all
three. Nothing here skips: without the corpus
(../shared/corpus/threads.jsonl) the gate cannot hold, and the module fails saying so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest

from relore.operate import database

ROOT = Path(__file__).resolve().parents[2]
GATE = ROOT / "benchmarks" / "quality" / "gate.py"
RUNNER = ROOT / "benchmarks" / "quality" / "run.py"
GRID = ROOT / "benchmarks" / "quality" / "fusion_grid.py"
FIGURES = ROOT / "benchmarks" / "quality" / "gate.json"
CORPUS = ROOT.parent / "shared" / "corpus" / "threads.jsonl"
RECORD = ".venv/bin/python benchmarks/quality/gate.py --home /tmp/gate-q --record"

pytestmark = [pytest.mark.slow, pytest.mark.quality]


def _run(script: Path, *args: str, cwd: Path, env: dict | None = None):
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    for name in ("RELORE_DATABASE_URL", "RELORE_READER_DATABASE_URL", "RELORE_HOME"):
        env.pop(name, None)  # the gate starts its own database
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )  # fmt: skip


# -- run in the background -------------------------------------------------------------
# The gate is a child process that lands, builds, embeds and asks for minutes, so the session
# starts it when it starts, on the background runner, before the benchmark runs
# (BACKGROUND_SECONDS: the longest first), and runs this module last (tests/conftest.py);
# run.py's and fusion_grid.py's toy runs follow it over the database it kept.
BACKGROUND_SECONDS = 300
_STARTED: dict[str, Future] = {}


def gate_runs(home: Path, toy: Path, grid: Path, env: dict | None = None) -> dict:
    """The gate over this checkout (keeping its Postgres), then run.py's and fusion_grid.py's
    toy runs over its build; the Postgres stopped after. Each finished process, and what the
    gate measured."""
    measured = home / "measured.json"
    try:
        gate = _run(GATE, "--home", str(home), "--keep", "--out", str(measured), cwd=home,
                    env=env)  # fmt: skip
        runs = {
            "gate": gate,
            "measured": json.loads(measured.read_text()) if measured.exists() else None,
            "home": home,
        }
        runs["toy"] = _run(
            RUNNER, "--home", str(home), "--skip-build", "--keep", "--out", str(toy / "q.json"),
            "--repo", "huggingface/peft", "--sample", "2", cwd=toy, env=env,
        )  # fmt: skip
        runs["grid"] = _run(
            GRID, "--home", str(home), "--slice", "why", "--only", "shipped", cwd=grid, env=env
        )
        return runs
    finally:
        database.stop_embedded(database.EmbeddedPaths(home / "pg"))


def _dirs(mktemp: Callable) -> tuple[Path, Path, Path]:
    return mktemp("quality-gate"), mktemp("quality-run"), mktemp("quality-grid")


def start_in_background(pool: Executor, items: list, mktemp: Callable, env: dict) -> None:
    assert CORPUS.exists(), f"the quality gate needs the corpus at {CORPUS}"
    _STARTED["gate"] = pool.submit(gate_runs, *_dirs(mktemp), env)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The gate's run over this checkout and the toy runs over its build (started in the
    background at session start; run now when it was not)."""
    assert CORPUS.exists(), f"the quality gate needs the corpus at {CORPUS}"
    started = _STARTED.pop("gate", None)
    if started is not None:
        return started.result()
    return gate_runs(*_dirs(tmp_path_factory.mktemp))


@pytest.fixture(scope="module")
def gated(runs):
    """(the gate's finished process, its measurement, its home)."""
    return runs["gate"], runs["measured"], runs["home"]


def test_the_gate_holds_on_this_commit(gated):
    done, measured, _ = gated
    assert done.returncode == 0, f"quality gate failed:\n{done.stdout[-4000:]}\n{done.stderr}"
    assert re.search(r"^quality gate held: \d+ slices x 2 metrics", done.stdout, re.M)
    assert re.search(r"^measured at \w+", done.stdout, re.M), done.stdout
    recorded = json.loads(FIGURES.read_text())
    assert measured["figures"].keys() == recorded["figures"].keys()
    for system, rows in recorded["figures"].items():
        assert measured["figures"][system].keys() == rows.keys(), system


def test_the_gate_fails_when_a_recorded_figure_is_raised_above_what_the_run_measures(
    gated, tmp_path
):
    done, measured, _ = gated
    assert measured is not None, done.stderr
    # the lowest figure the run measured, recorded as if it had been 0.05 higher
    now, system, row, metric = min(
        (figure[metric], system, row, metric)
        for system, rows in measured["figures"].items()
        for row, figure in rows.items()
        for metric in ("recall_at_10", "mrr")
    )
    recorded = json.loads(FIGURES.read_text())
    raised = round(now + 0.05, 3)
    recorded["figures"][system][row][metric] = raised
    (tmp_path / "raised.json").write_text(json.dumps(recorded))
    (tmp_path / "measured.json").write_text(json.dumps(measured))
    failed = _run(
        GATE, "--measured", str(tmp_path / "measured.json"), "--figures",
        str(tmp_path / "raised.json"), cwd=tmp_path,
    )  # fmt: skip
    assert failed.returncode == 1, failed.stdout + failed.stderr
    name = {"recall_at_10": "R@10", "mrr": "MRR"}[metric]
    assert f"DROPPED: {row} [{system}] {name}: recorded {raised:.3f}, measured {now:.3f}" in (
        failed.stderr
    )
    assert RECORD in failed.stderr


def test_run_py_runs_over_the_gates_build_and_prints_every_slice(gated, runs):
    done, _, _ = gated
    assert done.returncode in (0, 1), done.stderr  # measured, whatever it compared
    toy = runs["toy"]
    assert toy.returncode == 0, f"{toy.stdout[-3000:]}\n{toy.stderr[-3000:]}"
    for row in (
        "failure/verbatim",
        "rationale/words",
        "paraphrase/question",
        "change/description",
        "why/description",
    ):
        assert re.search(rf"^{re.escape(row)}\s+\w+\s+\d+\s+[\d.]+", toy.stdout, re.M), row
    assert '"measured_at"' in toy.stdout


def test_fusion_grid_runs_over_the_gates_build(gated, runs):
    done, _, _ = gated
    assert done.returncode in (0, 1), done.stderr
    grid = runs["grid"]
    assert grid.returncode == 0, f"{grid.stdout[-3000:]}\n{grid.stderr[-3000:]}"
    assert re.search(r"^shipped\s+why: [\d.]+/[\d.]+ \([\d.]+/[\d.]+\)$", grid.stdout, re.M), (
        grid.stdout
    )
