"""``/healthz`` while hostile ``grep``/``copies`` requests run: one ``relored serve`` process
over a clone holding what real repositories hold (a 13 MB one-line file, lines of 100 kB,
``# Copied from`` markers trailed by 20,000 spaces), hostile requests sent back to back from
``--hostile`` threads, and ``/healthz`` asked ``--probes`` times meanwhile, one at a time.
Goal: ``/healthz`` p99 ≤ 100 ms (issue #35: before the streaming splitter one such grep held
``/healthz`` for 11 minutes).

    .venv/bin/python benchmarks/hostile_lens.py [--probes 400 --hostile 2 --big-mb 13]

It starts its own embedded Postgres (``/healthz`` runs ``select 1``; the marts' functions are
created, as clone lines pass ``marts.relore_redact``) and daemon in a temporary directory,
and stops both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import provenance
from build_bench import DBT, ROOT

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fixtures import daemon as daemons
from fixtures import hostile_clone

from relore.contract.version import __version__
from relore.operate import database

HEADERS = {"x-relore-client": __version__}
REPO = hostile_clone.REPO
HOSTILE = [
    ("/api/v1/code/grep", {"repo": REPO, "pattern": "needle", "fixed": "1"}),
    ("/api/v1/code/grep", {"repo": REPO, "pattern": "needle", "path": "long_lines.py"}),
    ("/api/v1/code/copies", {"repo": REPO, "name": "base.Base"}),
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(base: str, probes: int, hostile: int) -> dict:
    stop = threading.Event()
    answered: list[tuple[str, int, float]] = []

    def attack(k: int) -> None:
        with httpx.Client(timeout=600) as client:
            i = k
            while not stop.is_set():
                path, params = HOSTILE[i % len(HOSTILE)]
                started = time.monotonic()
                status = client.get(base + path, params=params, headers=HEADERS).status_code
                answered.append((path.rsplit("/", 1)[-1], status, time.monotonic() - started))
                i += 1

    with httpx.Client(timeout=600) as client:
        client.get(base + "/healthz")
        quiet = []
        for _ in range(max(20, probes // 10)):
            started = time.monotonic()
            client.get(base + "/healthz")
            quiet.append(time.monotonic() - started)
        attackers = [threading.Thread(target=attack, args=(k,)) for k in range(hostile)]
        for thread in attackers:
            thread.start()
        while not answered:  # the first hostile answers are in: the attack is under way
            time.sleep(0.01)
        seconds, statuses = [], set()
        for _ in range(probes):
            started = time.monotonic()
            statuses.add(client.get(base + "/healthz").status_code)
            seconds.append(time.monotonic() - started)
        stop.set()
        for thread in attackers:
            thread.join()
    by_verb: dict[str, list[float]] = {}
    for verb, status, spent in answered:
        assert status == 200, (verb, status)
        by_verb.setdefault(verb, []).append(spent)
    return {
        "healthz_quiet_ms": {
            "p50": round(statistics.median(quiet) * 1000, 1),
            "p99": round(percentile(quiet, 0.99) * 1000, 1),
        },
        "healthz_under_attack_ms": {
            "probes": probes,
            "statuses": sorted(statuses),
            "p50": round(statistics.median(seconds) * 1000, 1),
            "p99": round(percentile(seconds, 0.99) * 1000, 1),
            "max": round(max(seconds) * 1000, 1),
        },
        "hostile_answers": {
            verb: {"requests": len(spent), "median_s": round(statistics.median(spent), 3)}
            for verb, spent in sorted(by_verb.items())
        },
    }


def relore_functions(writer: str, work: Path) -> None:
    """The marts' SQL functions (dbt's on-run-start hook alone): every line the clone prints
    passes ``marts.relore_redact`` before it is shown, as in a built deployment."""
    done = subprocess.run(
        [DBT, "run-operation", "install_relore_functions", "--quiet",
         "--target-path", str(work / "target"), "--log-path", str(work / "logs")],
        cwd=ROOT, env={**os.environ, "RELORE_DATABASE_URL": writer},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"dbt run-operation failed:\n{(done.stdout + done.stderr)[-4000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--probes", type=int, default=400)
    parser.add_argument("--hostile", type=int, default=2, help="threads sending hostile requests")
    parser.add_argument("--big-mb", type=float, default=13.0, help="the one-line files' size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        hostile_clone.build(root / "clones", int(args.big_mb * 1_000_000), spaced_files=20)
        paths = database.EmbeddedPaths(root / "pg")
        writer = database.start_embedded(paths)
        try:
            relore_functions(writer, root)
            env = {
                **os.environ,
                "RELORE_READER_DATABASE_URL": paths.reader_url(),
                "RELORE_CLONES_DIR": str(root / "clones"),
                "RELORE_INDEX_DIR": str(root / "index"),
            }
            for name in ("RELORE_DATABASE_URL", "RELORE_API_TOKENS", "RELORE_HOME"):
                env.pop(name, None)
            with daemons.serving(env, root / "serve.log") as base:
                report = measure(base, args.probes, args.hostile)
        finally:
            database.stop_embedded(paths)
    report["goal"] = "healthz p99 <= 100 ms under attack"
    report["measured_at"] = provenance.facts()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
