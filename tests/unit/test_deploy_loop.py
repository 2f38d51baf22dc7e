"""deploy/local/loop.sh (what the systemd timer, cron and the CronJob run), with stub
`relored` and `dbt` on PATH that record their arguments and exit as told."""

from __future__ import annotations

import ast
import configparser
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOOP = ROOT / "deploy" / "local" / "loop.sh"
LOCAL = ROOT / "deploy" / "local"
# the build of every run but the daily full check: the unit tests run in CI and once a day
BUILD = "dbt build --exclude-resource-type unit_test"

STUB = """#!/usr/bin/env bash
set -f  # the rules are case patterns, not file globs
echo "$(basename "$0") $*" >>"$CALLS"
code="${STUB_EXIT:-}"
for rule in $code; do  # "pattern=code" rules, first match wins
    case "$(basename "$0") $*" in ${rule%=*}) exit "${rule##*=}" ;; esac
done
exit 0
"""


@pytest.fixture
def loop(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("relored", "dbt"):
        (bin_dir / name).write_text(STUB)
        (bin_dir / name).chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: stub\n")
    calls = tmp_path / "calls"

    def run(*args: str, exits: str = "", **env: str):
        calls.write_text("")
        full_env = {
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "CALLS": str(calls),
            "STUB_EXIT": exits,
            "RELORE_DBT_PROJECT_DIR": str(project),
            "HOME": str(tmp_path),
            "RELORE_FULL_CHECK_HOUR": "off",  # or a run at 03:00 UTC checks every row
            **env,
        }
        result = subprocess.run(
            ["bash", str(LOOP), *args], env=full_env, capture_output=True, text=True, timeout=30
        )
        return result.returncode, calls.read_text().splitlines(), result.stderr

    return run


def test_loop_script_parses():
    subprocess.run(["bash", "-n", str(LOOP)], check=True)
    assert os.access(LOOP, os.X_OK)


def test_loop_cycles_over_every_repo_at_once_then_builds_once_then_checks_freshness(loop):
    """One `relored cycle` over all of them: a `relored extract` per repository spent the
    token's hour on the first one's backfill while the others' polls waited."""
    code, calls, _ = loop("acme/widgets", "acme/gadgets", RELORE_DATABASE_URL="postgresql://x/y")
    assert code == 0
    assert calls == [
        "relored cycle --repo acme/widgets --repo acme/gadgets --authority --quiet",
        BUILD,
        "relored embed",
        "relored index",
        "dbt source freshness",
    ]
    assert not [c for c in calls if c.startswith("relored extract")]


def _utc_hour() -> int:
    return int(subprocess.run(["date", "-u", "+%H"], capture_output=True, text=True).stdout)


def test_once_a_day_the_build_checks_every_row_not_only_what_builds_wrote(loop):
    url = "postgresql://x/y"
    for _ in range(2):  # a run that straddles the hour is run again
        hour = _utc_hour()
        code, calls, _ = loop("acme/widgets", RELORE_DATABASE_URL=url,
                              RELORE_FULL_CHECK_HOUR=f"{hour:02d}")  # fmt: skip
        if _utc_hour() == hour:
            break
    assert code == 0
    assert "dbt build --vars {relore_secret_scan: full, relore_tests: full}" in calls, calls
    for other in (str((hour + 12) % 24), "off"):
        code, calls, _ = loop("acme/widgets", RELORE_DATABASE_URL=url,
                              RELORE_FULL_CHECK_HOUR=other)  # fmt: skip
        assert code == 0 and BUILD in calls, f"hour {other} checked every row: {calls}"


@pytest.mark.parametrize("hour", ["24", "3am", "-1", ""])
def test_a_full_check_hour_that_is_not_an_hour_is_refused_before_anything_runs(loop, hour):
    code, calls, err = loop("acme/widgets", RELORE_DATABASE_URL="x", RELORE_FULL_CHECK_HOUR=hour)
    assert code == 2 and calls == []
    assert "RELORE_FULL_CHECK_HOUR" in err


def test_loop_starts_the_embedded_postgres_when_no_server_is_configured(loop):
    code, calls, _ = loop("acme/widgets", RELORE_AUTHORITY="0")
    assert code == 0
    assert calls == [
        "relored db start",
        "relored cycle --repo acme/widgets --quiet",
        BUILD,
        "relored embed",
        "relored index",
        "dbt source freshness",
    ]


def test_loop_reads_repos_from_the_environment_and_dry_run_runs_nothing(loop):
    code, calls, err = loop("--dry-run", RELORE_REPOS="a/b c/d", RELORE_DATABASE_URL="x")
    assert code == 0 and calls == []
    assert "+ relored cycle --repo a/b --repo c/d --authority --quiet" in err
    assert err.index("+ relored cycle") < err.index("+ dbt build")


def test_a_cycle_that_leaves_work_for_the_next_still_builds_and_exits_3(loop):
    code, calls, err = loop("acme/widgets", exits="relored?cycle*=3", RELORE_DATABASE_URL="x")
    assert code == 3
    assert BUILD in calls
    assert "some repositories go on next cycle" in err


def test_a_cycle_in_which_a_repo_failed_still_builds_what_the_others_landed(loop):
    code, calls, _ = loop(
        "bad/repo", "acme/widgets", exits="relored?cycle*=1", RELORE_DATABASE_URL="x"
    )
    assert code == 1
    assert calls[-4:] == [BUILD, "relored embed", "relored index", "dbt source freshness"]


def test_failed_dbt_build_stops_before_freshness(loop):
    code, calls, _ = loop("acme/widgets", exits="dbt?build*=1", RELORE_DATABASE_URL="x")
    assert code == 1
    assert calls[-1] == BUILD


def test_a_semantic_tier_that_is_off_here_is_said_and_fails_nothing(loop):
    code, calls, err = loop("a/b", exits="relored?embed=3", RELORE_DATABASE_URL="x")
    assert code == 0
    assert "the semantic tier is off here" in err
    assert calls[-2:] == ["relored index", "dbt source freshness"]


def test_a_failed_embed_fails_the_run_but_the_index_and_freshness_still_run(loop):
    code, calls, err = loop("a/b", exits="relored?embed=1", RELORE_DATABASE_URL="x")
    assert code == 1
    assert "relored embed failed (exit 1)" in err
    assert calls[-2:] == ["relored index", "dbt source freshness"]


def test_pods_that_build_their_own_index_skip_the_loops(loop):
    """A Kubernetes CronJob's index would be built in its own pod and thrown away."""
    code, calls, _ = loop("a/b", RELORE_DATABASE_URL="x", RELORE_INDEX="0")
    assert code == 0
    assert "relored embed" in calls and "relored index" not in calls


def test_stale_freshness_is_reported_but_fails_only_when_strict(loop):
    stale = "dbt?source*=1"
    assert loop("a/b", exits=stale, RELORE_DATABASE_URL="x")[0] == 0
    assert loop("a/b", exits=stale, RELORE_DATABASE_URL="x", RELORE_FRESHNESS_STRICT="1")[0] == 1


@pytest.mark.parametrize("args", [[], ["not-a-repo"]])
def test_loop_refuses_bad_usage(loop, args):
    code, calls, _ = loop(*args, RELORE_DATABASE_URL="x")
    assert code == 2 and calls == []


def test_systemd_units_and_cron_line_run_the_loop():
    service = configparser.ConfigParser(strict=False, interpolation=None)
    service.optionxform = str
    service.read(LOCAL / "relore-extract.service")
    assert service["Service"]["Type"] == "oneshot"
    assert service["Service"]["ExecStart"].endswith("deploy/local/loop.sh")
    assert service["Service"]["SuccessExitStatus"] == "3"
    assert service["Service"]["User"] != "root"
    timer = configparser.ConfigParser(strict=False, interpolation=None)
    timer.optionxform = str
    timer.read(LOCAL / "relore-extract.timer")
    assert timer["Timer"]["Unit"] == "relore-extract.service"
    assert timer["Install"]["WantedBy"] == "timers.target"
    db = configparser.ConfigParser(strict=False, interpolation=None)
    db.optionxform = str
    db.read(LOCAL / "relore-db.service")
    assert db["Service"]["ExecStart"].endswith("relored db start")
    assert db["Service"]["RemainAfterExit"] == "yes"  # the server outlives each loop run
    assert "relore-db.service" in service["Unit"]["Wants"]
    cron = [
        line
        for line in (LOCAL / "relore.cron").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(cron) == 2
    loop_line, sweep_line = cron
    assert "flock -n" in loop_line and "deploy/local/loop.sh" in loop_line
    # the weekly sweep shares the loop's lock, so the two never run at once
    assert "flock -n .relore/loop.lock relored extract sweep" in sweep_line
    assert all(len(line.split()[:5]) == 5 for line in cron)


def test_the_build_benchmark_builds_with_the_loops_arguments(loop):
    """benchmarks/build_bench.py times the loop's hourly build: its arguments drifting from
    loop.sh's would time a build no deployment runs."""

    bench = ast.parse((ROOT / "benchmarks" / "build_bench.py").read_text())
    (found,) = [
        node.value
        for node in bench.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "LOOP_BUILD"
    ]
    _, calls, _ = loop("acme/widgets", RELORE_DATABASE_URL="x")
    assert " ".join(["dbt build", *ast.literal_eval(found)]) in calls, calls
