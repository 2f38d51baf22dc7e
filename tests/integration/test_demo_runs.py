"""`make demo`, as a new user runs it: three times on one home, then once after `make clean`
(#37 items 1 and 3).

The demo says it is safe to run again. The second run used to fail (exit 3: the deletions
pass followed an absolute next-page URL to the previous run's fake GitHub, on a port since
closed), and half the verbs had nothing to answer from (no clone: `why`, `symbol`, `grep`,
`copies` exited 5; no rules loaded). Here every run must print search hits, and its last
screen an answer from every verb.

The demo runs in a copy of this checkout's files (`make clean` removes `.relore`, `target`,
`*.egg-info` where it runs), with this venv's `relore`/`relored` on PATH and a home, an
embedded Postgres and a daemon port of its own. One test function: each run is tens of
seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Executor, Future
from pathlib import Path

import pytest
from fixtures import daemon as daemons

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
REPO = "acme/widgets"
RUN_TIMEOUT_S = 900
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_HEADER = re.compile(r"^== (.*)$", re.M)

# Each verb's section of the last screen, by its header's start, and what an answer (not a
# refusal or an empty page) holds.
ANSWERS = {
    "relore search": re.compile(r"^\d+\. acme/widgets#\d+ ", re.M),
    "relore status": re.compile(r"^acme/widgets: [1-9]\d* threads", re.M),
    "relore thread": re.compile(r"^outline: [1-9]\d* of ", re.M),
    "relore inflight": re.compile(r"^pull requests claiming to close it: [1-9]", re.M),
    "relore rules": re.compile(r"^[1-9]\d* of \d+ eligible rule\(s\) sent.*\n- \[", re.M),
    "relore why": re.compile(r"^pull request: acme/widgets#\d+ merged", re.M),
    "relore symbol": re.compile(r"^⟦[^⟧]+⟧:\d+  class  ⟦WidgetEncoder⟧", re.M),
    "relore grep": re.compile(r"^⟦[^⟧]+⟧:\d+\n    > .*guess_type", re.M),
    "relore copies": re.compile(r"^⟦[^⟧]+⟧:\d+  function ⟦encode_basestring⟧", re.M),
    "relore map": re.compile(r"^1\. +[\d.]+  ⟦", re.M),
    "relore defs": re.compile(r"^⟦[^⟧]+⟧:\d+  function  ⟦create_app⟧", re.M),
    "relore refs": re.compile(r"^⟦[^⟧]+⟧:\d+:\d+  definition", re.M),
}


def _checkout(tmp_path: Path) -> Path:
    """This checkout's files (tracked and new, as they are on disk), without .git or a venv."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    copy = tmp_path / "checkout"
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    return copy


def _env(tmp_path: Path, checkout: Path, base: dict) -> dict:
    keep = ("LANG", "LC_ALL", "TMPDIR", "TZ")
    return {
        **{k: base[k] for k in keep if k in base},
        "PATH": f"{BIN}:{base['PATH']}",
        "HOME": str(tmp_path / "user"),  # the rules session file and the lens cache go here
        "RELORE_HOME": str(checkout / ".relore"),
        "RELORE_DEMO_PORT": str(daemons.free_port()),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }


def _sections(text: str) -> list[tuple[str, str]]:
    """(header, body) of each `== …` step the demo printed, in order."""
    text = _ANSI.sub("", text)
    marks = list(_HEADER.finditer(text))
    return [
        (m.group(1), text[m.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)])
        for i, m in enumerate(marks)
    ]


def _demo(checkout: Path, env: dict, which: str) -> list[tuple[str, str]]:
    done = subprocess.run(
        ["bash", "deploy/local/demo.sh"], cwd=checkout, env=env,
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    tail = f"{which}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, tail
    return _sections(done.stdout)


def _missing_answers(sections: list[tuple[str, str]]) -> list[str]:
    """The verbs the last screen (every step after the daemon started) has no answer from."""
    served = [i for i, (header, _) in enumerate(sections) if header.startswith("relored serve")]
    assert served, [h for h, _ in sections]
    screen = sections[served[-1] + 1 :]
    return [
        verb
        for verb, answer in ANSWERS.items()
        if not any((h + " ").startswith(verb + " ") and answer.search(body) for h, body in screen)
    ]


def demo_runs(tmp_path: Path, base_env: dict | None = None) -> None:
    """Three demo runs on one home, ``make clean``, and a fourth: each must answer from
    every verb (raises AssertionError naming the run that did not)."""
    checkout = _checkout(tmp_path)
    env = _env(tmp_path, checkout, os.environ if base_env is None else base_env)
    try:
        for which in ("first run", "second run", "third run"):
            sections = _demo(checkout, env, which)
            assert _missing_answers(sections) == [], which
        clean = subprocess.run(
            ["make", "clean"], cwd=checkout, env=env, capture_output=True, text=True, timeout=120
        )
        assert clean.returncode == 0, clean.stderr
        assert not (checkout / ".relore").exists()
        sections = _demo(checkout, env, "run after make clean")
        assert _missing_answers(sections) == [], "run after make clean"
    finally:
        subprocess.run(["bash", "deploy/local/demo_stop.sh"], cwd=checkout, env=env, timeout=60)
        subprocess.run(["relored", "db", "stop"], cwd=checkout, env=env, timeout=120)


# The runs are child processes (a shell, Postgres, a daemon): the session starts them when it
# starts (tests/conftest.py calls start_in_background, with the environment the session began
# with) and runs this module last, so the test below waits for what ran beside the suite.
_STARTED: dict[str, Future] = {}


def start_in_background(pool: Executor, items: list, mktemp, env: dict) -> None:
    _STARTED["demo"] = pool.submit(demo_runs, mktemp("demo"), env)


def test_make_demo_runs_again_and_after_clean_and_answers_from_every_verb(tmp_path):
    started = _STARTED.pop("demo", None)
    if started is None:
        demo_runs(tmp_path)
    else:
        started.result()
