"""Every benchmark runs, at its smallest sizes, and prints its figures (#19).

A figure in benchmarks/results/ is a promise that the command beside it still runs on main.
Each script in ``benchmarks/`` is run here as a user runs it (a child process of this venv's
Python, its own embedded Postgres where it starts one), at toy sizes that take seconds; the
run fails when a script exits non-zero, prints no figures, or prints no ``measured at``
stamp. ``build_again.py``, ``semantic_bench.py`` and ``serve_load.py`` need a built database:
they run over the one ``build_bench.py --keep`` leaves, as benchmarks/README.md chains them.
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
BENCHMARKS = ROOT / "benchmarks"
PEER_PYTHON = ROOT / ".venv-peers" / "bin" / "python"

pytestmark = pytest.mark.slow


def json_objects(text: str) -> list[dict]:
    """Every top-level JSON object printed, in order (scripts mix lines and indented JSON)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while (start := text.find("{", at)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            at = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        at = end
    return found


def numbers(value) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in numbers(v)]
    return []


def last_json(out: str) -> dict:
    objects = json_objects(out)
    assert objects, f"no JSON figures printed:\n{out[-2000:]}"
    return objects[-1]


# -- what each script's figures must show ------------------------------------------------


def corpus_scale_figures(out: str, _: Path) -> None:
    assert re.search(r"threads=50 comments=\d+ generate_s=[\d.]+", out), out


def code_lens_figures(out: str, _: Path) -> None:
    for verb in ("map", "defs", "refs"):
        assert re.search(rf"^{verb}: cold [\d.]+ s .*cached [\d.]+ s", out, re.M), out
    assert re.search(r"^phases of a cached refs search .* stats \+ records \d+ ms", out, re.M), out
    assert re.search(r"^floor of a cold refs search .* alone [\d.]+ s; grep", out, re.M), out
    # the held-out check over the installed packages (starlette is relore's own dependency)
    assert re.search(r"^entry points \[starlette\]: \d+ of 8 in the top 40 \(Starlette ", out, re.M)
    assert re.search(r"^top 5 \[starlette\]: (\w+, ){4}\w+$", out, re.M), out


def rules_figures(out: str, _: Path) -> None:
    for split in ("all", "dev", "held-out"):
        assert re.search(rf"^tagged \[{split}\]: 121 rules, \d+ tasks; recall 0\.\d\d", out, re.M)


def embed_figures(out: str, _: Path) -> None:
    report = last_json(out)
    assert report["measured_at"]["commit"]
    assert report["mpnet"]["numpy"]["query"]["p50_ms"] > 0
    assert [n for n in numbers({k: v for k, v in report.items() if k != "measured_at"}) if n > 0]


def deletion_figures(out: str, _: Path) -> None:
    assert re.search(r"^\| idle poll \| \d+ \| \d+ \|", out, re.M), out
    assert re.search(r"^\| poll 1 after 2 deletions \| \d+ \| \d+ \| .* \| 2 \|", out, re.M), out


def bounds_figures(out: str, _: Path) -> None:
    report = last_json(out)
    cases = {k: v for k, v in report.items() if isinstance(v, dict) and "median_s" in v}
    assert cases, report
    for name, case in cases.items():
        assert case["median_s"] > 0 and case["said"], (name, case)


def hostile_lens_figures(out: str, _: Path) -> None:
    report = last_json(out)
    attacked = report["healthz_under_attack_ms"]
    assert attacked["statuses"] == [200] and attacked["p99"] > 0, report
    assert report["hostile_answers"], report


def sanitize_figures(out: str, _: Path) -> None:
    report = last_json(out)
    kinds = {k: v for k, v in report.items() if isinstance(v, dict) and "min_ms" in v}
    assert {"ascii prose", "ascii with html", "japanese", "hostile catalog"} <= set(kinds)
    for name, kind in kinds.items():
        assert kind["min_ms"] > 0 and kind["page_chars"] > 0, (name, kind)


def redaction_figures(out: str, tmp: Path) -> None:
    report = last_json(out)
    assert report["planted"] > 0 and report["recall"] > 0, report
    assert (tmp / "report.md").read_text().startswith("# Redaction benchmark report")


def paraphrase_check_figures(out: str, _: Path) -> None:
    assert out.strip().splitlines()[-1] == "OK", out


def eval_rebuilt_identical(out: str, tmp: Path) -> None:
    rebuilt = (tmp / "eval.jsonl").read_bytes()
    assert rebuilt == (BENCHMARKS / "quality" / "eval.jsonl").read_bytes(), (
        "build_eval.py no longer rebuilds the checked-in eval.jsonl"
    )
    assert re.search(r"^\d+ items from ", out, re.M)


def extract_figures(out: str, _: Path) -> None:
    rows = json_objects(out)
    assert rows[0]["measured_at"]["commit"], rows[0]
    tools = {row["tool"]: row for row in rows if "tool" in row}
    assert tools["relore land"]["complete"] and tools["relore land"]["payloads"] > 0, tools
    # the peer hits GitHub's page wall (--max-page 1) and the run goes on to report it
    peer = tools["github-to-sqlite"]
    assert peer["complete"] is False and any(peer["exit"].values()), peer
    assert tools["relore idle poll"]["written"] == 0, tools


def why_figures(out: str, _: Path) -> None:
    report = last_json(out)
    assert report["measured_at"]["commit"], report
    assert [n for n in numbers({k: v for k, v in report.items() if k != "measured_at"}) if n > 0]


def replica_figures(out: str, _: Path) -> None:
    report = last_json(out)
    assert report["measured_at"]["commit"] and report["documents"] > 0, report
    for label, daemons in (("primary only", 1), ("2 standby(s)", 2)):
        run = report[label]
        assert run["daemons"] == daemons and len(run["index_build_s"]) == daemons, run
        for case in ("question (2-6 words)", "thread page"):
            figures = run[case]
            assert figures["errors"] == 0 and figures["reads_per_s_total"] > 0, (label, figures)
            assert len(figures["reads_per_s_per_daemon"]) == daemons, (label, figures)


def org_budget_figures(out: str, _: Path) -> None:
    report = last_json(out)
    assert report["measured_at"]["commit"] and report["backfill_hours"] >= 2, report
    assert report["refused_403_429"] == 0 and report["hours_over_fewest"] <= 1.5, report


def stamp_printed(out: str, _: Path) -> None:
    assert re.search(r"^measured at \w+", out, re.M), out


TOY: dict[str, tuple[list[str], Callable[[str, Path], None]]] = {
    "benchmarks/provenance.py": ([], stamp_printed),
    "benchmarks/corpus_scale.py": (
        ["--threads", "50", "--comments-per-thread", "3"],
        corpus_scale_figures,
    ),
    "benchmarks/code_lens.py": (
        [
            *("--path", str(ROOT / "serve"), "--name", "search", "--phases", "--floor"),
            *("--entry-points", "--top", "5"),
        ],
        code_lens_figures,
    ),
    "benchmarks/rules_bench.py": ([], rules_figures),
    "benchmarks/embed_bench.py": (
        [
            *("--queries", "5", "--docs", "4", "--repeat", "1", "--only", "latency"),
            *("--encoders", "minilm,mpnet"),
        ],
        embed_figures,
    ),
    "benchmarks/deletion_cost.py": (["--threads", "20", "--deletions", "2"], deletion_figures),
    "benchmarks/org_budget.py": (
        "--repos 2 --threads 12 --big 60 --limit 100".split(),
        org_budget_figures,
    ),
    "benchmarks/serve_bounds.py": (["--requests", "2", "--concurrency", "2"], bounds_figures),
    "benchmarks/hostile_lens.py": (
        ["--probes", "20", "--hostile", "1", "--big-mb", "0.5"],
        hostile_lens_figures,
    ),
    "benchmarks/sanitize_bench.py": (["--hits", "5", "--runs", "2"], sanitize_figures),
    "benchmarks/redaction_bench.py": (
        ["--timing-texts", "50", "--runs", "1", "--report", "{tmp}/report.md"],
        redaction_figures,
    ),
    "benchmarks/quality/paraphrase_check.py": (["--quiet"], paraphrase_check_figures),
    # the change and why slices' rules; it ends on OK like the paraphrase check
    "benchmarks/quality/intent_check.py": (["--quiet"], paraphrase_check_figures),
    "benchmarks/quality/build_eval.py": (["--out", "{tmp}/eval.jsonl"], eval_rebuilt_identical),
    "benchmarks/extract_bench.py": (
        ["--threads", "30", "--max-page", "1", "--no-build", "--g2s-python", str(PEER_PYTHON)],
        extract_figures,
    ),
    "benchmarks/replica_reads.py": (
        "--threads 20 --comments-per-thread 3 --replicas 0,2 --seconds 0.5 --concurrency 1".split(),
        replica_figures,
    ),
    "benchmarks/why_bench.py": (
        "--commits 30 --runs 1 --files 20 --large-commits 60 --lines 5 --hot-lines 2".split(),
        why_figures,
    ),
}
# run over the database build_bench.py --keep leaves (test_benchmarks_over_a_kept_build)
CHAINED = (
    "benchmarks/build_bench.py",
    "benchmarks/build_again.py",
    "benchmarks/semantic_bench.py",
    "benchmarks/serve_load.py",
    "benchmarks/org_scale.py",
)
# run by tests/integration/test_quality_gate.py: the gate over the whole corpus, then run.py
# and fusion_grid.py over the database it leaves
QUALITY = (
    "benchmarks/quality/gate.py",
    "benchmarks/quality/run.py",
    "benchmarks/quality/fusion_grid.py",
)


def run(
    script: str, args: list[str], tmp: Path, timeout: float = 900, env: dict | None = None
) -> str:
    argv = [sys.executable, str(ROOT / script), *(a.replace("{tmp}", str(tmp)) for a in args)]
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    for name in ("RELORE_DATABASE_URL", "RELORE_READER_DATABASE_URL", "RELORE_HOME"):
        env.pop(name, None)  # each benchmark starts or is given its own database
    done = subprocess.run(
        argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{script} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


def kept_build(tmp: Path, env: dict | None = None) -> dict[str, str]:
    """The README's chain over one kept build (build_bench.py --keep, then build_again.py,
    semantic_bench.py and serve_load.py over its database): each script's output, the
    kept cluster stopped after."""
    outs = {
        "build": run(
            "benchmarks/build_bench.py",
            ["--threads", "30", "--comments-per-thread", "3", "--keep"],
            tmp,
            env=env,
        )
    }
    build = last_json(outs["build"])
    try:
        url = build["database_url"]
        outs["again"] = run(
            "benchmarks/build_again.py",
            ["--url", url, "--work", build["work"], "--change-threads", "3", "--builds", "2"],
            tmp,
            env=env,
        )
        outs["semantic"] = run(
            "benchmarks/semantic_bench.py", ["--url", url, "--repo", "acme/widgets"], tmp, env=env
        )
        brief = "--seconds 0.5 --concurrency 1 --cold-runs 1 --alternative".split()
        outs["load"] = run(
            "benchmarks/serve_load.py",
            ["--url", url, "--repo", "acme/widgets", *brief],
            tmp,
            env=env,
        )
        # last: it lands an organisation beside the kept repository
        outs["org"] = run(
            "benchmarks/org_scale.py",
            ["--url", url, "--work", "{tmp}/org", "--repos", "2", "--threads", "12",
             "--comments-per-thread", "2", "--seconds", "0.3", "--concurrency", "1",
             "--cases", "rare word"],
            tmp,
            env=env,
        )  # fmt: skip
        return outs
    finally:
        database.stop_embedded(database.EmbeddedPaths(Path(build["work"]) / "pg"))


# -- run in the background -------------------------------------------------------------
# These runs are child processes that wait on their own Postgres much of the time, so the
# session starts them when it starts (tests/conftest.py calls start_in_background, with the
# environment the session began with) and runs this module last: each test then waits for
# its script's run and checks its figures, while the rest of the suite ran beside them.
_STARTED: dict[str, Future] = {}
# the longest first (seconds measured at toy sizes), so two runners finish together
_LONGEST_FIRST = (
    "kept build",
    "benchmarks/why_bench.py",
    "benchmarks/replica_reads.py",
    "benchmarks/extract_bench.py",
    "benchmarks/quality/run.py",
    "benchmarks/redaction_bench.py",
    "benchmarks/hostile_lens.py",
    "benchmarks/deletion_cost.py",
    "benchmarks/serve_bounds.py",
    "benchmarks/code_lens.py",
)


def start_in_background(pool: Executor, items: list, mktemp: Callable, env: dict) -> None:
    """Submit the run each selected item checks to ``pool``, the longest first."""
    wanted = set()
    for item in items:
        if item.originalname == "test_benchmarks_over_a_kept_build":
            wanted.add("kept build")
        elif item.originalname == "test_benchmark_runs_at_toy_scale_and_prints_figures":
            wanted.add(item.callspec.params["script"])
    order = {name: at for at, name in enumerate(_LONGEST_FIRST)}
    for name in sorted(wanted, key=lambda name: (order.get(name, len(order)), name)):
        tmp = mktemp("bench-" + Path(name).stem.replace(" ", "-"))
        if name == "kept build":
            _STARTED[name] = pool.submit(lambda tmp=tmp: (kept_build(tmp, env), tmp))
        else:
            args = TOY[name][0]
            _STARTED[name] = pool.submit(
                lambda name=name, args=args, tmp=tmp: (run(name, args, tmp, env=env), tmp)
            )


def _outcome(name: str, compute: Callable):
    """The background run's result, or the run now when none was started."""
    started = _STARTED.pop(name, None)
    return started.result() if started is not None else compute()


def scripts_with_a_main() -> set[str]:
    return {
        str(path.relative_to(ROOT))
        for path in BENCHMARKS.rglob("*.py")
        if 'if __name__ == "__main__":' in path.read_text()
    }


def test_every_benchmark_script_has_a_toy_run():
    untested = scripts_with_a_main() - set(TOY) - set(CHAINED) - set(QUALITY)
    assert not untested, f"benchmarks without a toy run here: {sorted(untested)}"


def test_every_benchmark_command_in_the_readme_and_results_names_a_script_that_exists():
    pages = [BENCHMARKS / "README.md", *sorted((BENCHMARKS / "results").glob("*.md"))]
    missing = sorted(
        f"{page.relative_to(ROOT)}: {name}"
        for page in pages
        for name in set(re.findall(r"benchmarks/[\w/]+\.py", page.read_text()))
        if not (ROOT / name).exists()
    )
    assert not missing, f"benchmark pages run scripts that do not exist: {missing}"


@pytest.mark.parametrize("script", sorted(TOY))
def test_benchmark_runs_at_toy_scale_and_prints_figures(script, tmp_path):
    args, check = TOY[script]
    out, tmp = _outcome(script, lambda: (run(script, args, tmp_path), tmp_path))
    check(out, tmp)


def test_benchmarks_over_a_kept_build(tmp_path):
    outs, _ = _outcome("kept build", lambda: (kept_build(tmp_path), tmp_path))
    build = last_json(outs["build"])
    assert build["measured_at"]["commit"]
    assert build["noop_build"]["mart_rows_written"] == 0, build["noop_build"]
    assert build["incremental_build"]["mart_rows_written"] > 0, build["incremental_build"]
    again = last_json(outs["again"])
    assert again["measured_at"]["commit"] and again["change"]["threads_changed"] == 3
    changed, nothing = again["builds"]
    assert changed["mart_rows_written"] > 0 and nothing["mart_rows_written"] == 0, again
    assert changed["node_s"]["model"] > 0 and changed["slowest"], changed
    semantic = last_json(outs["semantic"])
    assert semantic["measured_at"]["commit"]
    assert semantic["noop"]["embedded"] == 0, semantic
    assert semantic["changed_embed"]["embedded"] > 0, semantic
    load = last_json(outs["load"])
    cases = {k: v for k, v in load.items() if isinstance(v, dict) and "1 client(s)" in v}
    assert len(cases) >= 5, load
    for name, levels in cases.items():
        for side in ("service", "direct"):
            figures = levels["1 client(s)"][side]
            assert figures["requests"] > 0 and figures["errors"] == 0, (name, side, figures)
    for name in ("change description (10-40 lexemes, fused)", "precedent (change description"):
        case = next(v for k, v in cases.items() if k.startswith(name))
        fts = case["1 client(s)"]["postgres_fts"]
        assert fts["requests"] > 0 and fts["errors"] == 0, (name, fts)
    org = last_json(outs["org"])
    assert org["repositories"] == 3 and org["build_noop"]["mart_rows_written"] == 0, org
    assert org["build_first"]["mart_rows_written"] > 0, org
    # the landing aged and a poll before: the measured change derives what it changed only
    assert 0 < org["build_change"]["mart_rows_written"] < org["build_first"]["mart_rows_written"]
    for scope in ("repo", "every"):
        rare = org["reads"][scope]["rare word"]["1 client(s)"]["service"]
        assert rare["requests"] > 0 and rare["errors"] == 0, (scope, rare)
