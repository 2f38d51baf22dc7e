"""Reads per second through the service with 0, 1 and 2 hot standbys (#17).

A primary (built here from the generated corpus, or a kept ``build_bench.py --keep``
cluster given by ``--home``) is restarted on loopback, standbys are made from it with
``operate/replica.py`` (``pg_basebackup -R``), and one ``relored serve`` runs per server read:
the primary's reader alone (0 standbys), or one daemon per standby (1, 2). Each daemon's search
index is built first (``relored index`` against the server it reads, the same files the
daemon opens), timed: every standby's daemon builds its own. Then a load process per daemon
(``serve_load.py``'s HTTP client, ``--concurrency`` workers each) sends the same requests for
``--seconds``, all daemons at once; the report gives each daemon's reads/s and the total.

    .venv/bin/python benchmarks/replica_reads.py --threads 30000 --comments-per-thread 40
    .venv/bin/python benchmarks/replica_reads.py --home <build_bench work>/pg --repo acme/widgets

Every server, daemon and load process shares this machine's cores: on 2 cores the ratio of
2 standbys to 1 says how much of a core one daemon and its standby leave idle, not what two
machines would give (that is 2x by construction: nothing is shared between standbys).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import provenance
import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import build_bench  # noqa: E402
import serve_load  # noqa: E402
from fixtures import corpus  # noqa: E402
from fixtures import daemon as daemons  # noqa: E402

from relore.extract.landing import Repo  # noqa: E402
from relore.operate import database, replica  # noqa: E402

BIN = Path(sys.executable).parent
CASES = ("question (2-6 words)", "thread page")


def build_primary(work: Path, threads: int, comments: int) -> tuple[database.EmbeddedPaths, str]:
    """A new embedded primary holding the generated corpus, built once; its home and repo."""
    paths = database.EmbeddedPaths(work / "pg")
    url = database.start_embedded(paths)
    world = corpus.generate(seed=1, threads=threads, comments_per_thread=comments)
    repo = Repo(world.repo_id, world.repo_payload["full_name"])
    build_bench.land_corpus(url, world, repo)
    build_bench.dbt_build(url, work)
    return paths, repo.full_name


def index_for(reader: str, index_dir: Path) -> float:
    """``relored index`` against ``reader``: the index its daemon opens, built; seconds."""
    env = {**os.environ, "RELORE_READER_DATABASE_URL": reader, "RELORE_INDEX_DIR": str(index_dir)}
    start = time.perf_counter()
    done = subprocess.run(
        [str(BIN / "relored"), "index", "--json"], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"relored index failed:\n{done.stderr[-3000:]}")
    return round(time.perf_counter() - start, 2)


def load_all(bases: list[str], path: str, asked: list, args) -> list[dict]:
    """One load process per daemon, all started together; each one's figures."""
    command = [
        sys.executable, str(ROOT / "benchmarks" / "serve_load.py"), "--client", "http",
        "--path", path, "--params", json.dumps(asked), "--concurrency", str(args.concurrency),
        "--seconds", str(args.seconds),
    ]  # fmt: skip
    running = [
        subprocess.Popen([*command, "--base", base], stdout=subprocess.PIPE, text=True)
        for base in bases
    ]
    figures = []
    for process in running:
        out, _ = process.communicate(timeout=args.seconds * 10 + 600)
        if process.returncode != 0:
            raise SystemExit(f"a load process failed with {process.returncode}")
        figures.append(json.loads(out))
    return figures


def measure(servers: list[replica.Server], cases: dict, args, work: Path, label: str) -> dict:
    """A daemon per server in ``servers``, each index built first, then loaded together."""
    result: dict = {"daemons": len(servers), "index_build_s": []}
    with contextlib.ExitStack() as stack:
        bases = []
        for i, server in enumerate(servers):
            index_dir = work / f"index-{label}-{i}"
            result["index_build_s"].append(index_for(server.reader_url, index_dir))
            env = {
                **os.environ,
                "RELORE_READER_DATABASE_URL": server.reader_url,
                "RELORE_INDEX_DIR": str(index_dir),
            }
            for name in ("RELORE_DATABASE_URL", "RELORE_API_TOKENS"):
                env.pop(name, None)
            bases.append(stack.enter_context(daemons.serving(env)))
        for name in CASES:
            path, asked = cases[name]
            each = load_all(bases, path, asked, args)
            total = sum(f["req_per_s"] for f in each)
            result[name] = {
                "reads_per_s_total": round(total, 1),
                "reads_per_s_per_daemon": [f["req_per_s"] for f in each],
                "p50_ms": [f["p50_ms"] for f in each],
                "p95_ms": [f["p95_ms"] for f in each],
                "errors": sum(f["errors"] for f in each),
            }
            print(f"{label}: {name}: {result[name]}", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=30_000)
    parser.add_argument("--comments-per-thread", type=int, default=40)
    parser.add_argument("--home", help="a kept embedded cluster (build_bench.py --keep: <work>/pg)")
    parser.add_argument("--repo", help="the repository to read (with --home)")
    parser.add_argument("--replicas", default="0,1,2", help="standby counts to measure")
    parser.add_argument("--concurrency", type=int, default=8, help="clients per daemon")
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    if bool(args.home) != bool(args.repo):
        parser.error("--home and --repo go together")
    counts = [int(x) for x in args.replicas.split(",")]
    work = Path(tempfile.mkdtemp(prefix="relore-replicas-"))
    if args.home:
        paths, repo = database.EmbeddedPaths(Path(args.home).resolve()), args.repo
        database.start_embedded(paths)  # running or not, as start leaves it
    else:
        paths, repo = build_primary(work, args.threads, args.comments_per_thread)
    primary = replica.serve_on_loopback(paths)
    standbys: list[replica.Server] = []
    try:
        start = time.perf_counter()
        for i in range(max(counts)):
            standbys.append(replica.make_standby(primary, work / f"standby-{i}"))
        made_s = round(time.perf_counter() - start, 1)
        replica.wait_replayed(primary, standbys)
        with psycopg.connect(primary.writer_url) as conn:
            documents = conn.execute("select count(*) from marts.documents").fetchone()[0]
        cases = serve_load.cases(primary.writer_url, repo)
        report: dict = {
            "documents": documents,
            "repo": repo,
            "standbys_made_s": made_s,
            "concurrency_per_daemon": args.concurrency,
            "seconds_per_case": args.seconds,
        }
        for count in counts:
            servers = standbys[:count] if count else [primary]
            label = f"{count} standby(s)" if count else "primary only"
            report[label] = measure(servers, cases, args, work, label)
        base = report.get("primary only") or report.get("1 standby(s)")
        for count in counts:
            label = f"{count} standby(s)" if count else "primary only"
            report[label]["total_vs_primary_only"] = {
                name: round(
                    report[label][name]["reads_per_s_total"] / base[name]["reads_per_s_total"], 2
                )
                for name in CASES
            }
        report["measured_at"] = provenance.facts()
        print(json.dumps(report, indent=2))
    finally:
        for standby in standbys:
            replica.stop(standby)
        replica.stop(primary)


if __name__ == "__main__":
    main()
