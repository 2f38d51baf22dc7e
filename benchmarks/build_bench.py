"""dbt build at scale: full, after 1% of threads change, and with nothing new; plus sizes,
and the search index (serve/lexical) built, refreshed after each build, and rebuilt.

The corpus is generated and landed straight into raw with the real landing writer (the
HTTP path is measured by extract_bench.py), then the repo's dbt project is built against a
private embedded Postgres, timed, with the child's peak memory and the rows it wrote.

    .venv/bin/python benchmarks/build_bench.py --threads 50000 --comments-per-thread 40

Only the corpus, kept for the load and organisation benchmarks (land, the full build and the
search index; its writer URL and home printed; start it again with
``RELORE_HOME=/tmp/scale/pg relored db start``):

    .venv/bin/python benchmarks/build_bench.py --work /tmp/scale --first-build-only
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import provenance  # noqa: E402
from fixtures import corpus  # noqa: E402

from relore.extract.landing import RawObject, Repo, land  # noqa: E402
from relore.operate import database  # noqa: E402

DBT = str(Path(sys.executable).parent / "dbt")
# what deploy/local/loop.sh passes on every run but the daily full check
LOOP_BUILD = ("--exclude-resource-type", "unit_test")
BATCH = 5000


# Loads spread over the days before, newest two days ago, as polls land each object soon after
# GitHub last changed it: the builds' one-hour lookback then holds only what arrives later.
# Rows loaded in the last six hours only (what this run landed; a kept corpus keeps its spread).
SPREAD_LOADS = """
with changed as (
    select repo_id, row_id, coalesce((payload ->> 'updated_at')::timestamptz,
        (payload ->> 'created_at')::timestamptz) as at
    from raw.github_objects
    where loaded_at > now() - interval '6 hours'
),
newest as (select max(at) as at from changed)
update raw.github_objects as o
set loaded_at = now() - interval '2 days'
    - (newest.at - coalesce(changed.at, newest.at))
from changed, newest
where o.repo_id = changed.repo_id and o.row_id = changed.row_id
"""


def land_corpus(url: str, world, repo: Repo) -> int:
    written = 0
    with psycopg.connect(url, autocommit=True) as conn:

        def flush(batch):
            nonlocal written
            with conn.transaction(), conn.cursor() as cur:
                written += land(cur, repo, "bench", batch)

        batch: list[RawObject] = [RawObject("repository", repo.repo_id, None, world.repo_payload)]
        for issue in world.iter_issues():
            batch.append(RawObject("issue", issue["id"], issue["number"], issue))
            if len(batch) >= BATCH:
                flush(batch)
                batch = []
        for comment in world.iter_comments():
            number = int(comment["issue_url"].rsplit("/", 1)[-1])
            batch.append(RawObject("issue_comment", comment["id"], number, comment))
            if len(batch) >= BATCH:
                flush(batch)
                batch = []
        flush(batch)
    return written


def mart_writes(url: str) -> int:
    with psycopg.connect(url) as conn:
        conn.execute("select pg_stat_clear_snapshot()")
        row = conn.execute(
            "select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) "
            "from pg_stat_user_tables where schemaname = 'marts'"
        ).fetchone()
    return int(row[0])


def dbt_build(url: str, work: Path, *, full_refresh: bool = False) -> dict:
    env = {**os.environ, "RELORE_DATABASE_URL": url}
    before = mart_writes(url)
    start = time.perf_counter()
    child = subprocess.Popen(
        [DBT, "build", "--quiet", *LOOP_BUILD, "--target-path", str(work / "target"),
         "--log-path", str(work / "logs"), *(["--full-refresh"] if full_refresh else [])],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    output = child.stdout.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"dbt build failed:\n{output[-4000:]}")
    time.sleep(1.0)  # let the last backend's statistics reach the shared counters
    return {
        "wall_s": round(wall, 1),
        "dbt_peak_rss_mib": round(usage.ru_maxrss / 1024),
        "mart_rows_written": mart_writes(url) - before,
    }


def sizes(url: str, threads: int) -> list[dict]:
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            """
            select n.nspname || '.' || c.relname, pg_total_relation_size(c.oid)
            from pg_class c join pg_namespace n on n.oid = c.relnamespace
            where c.relkind = 'r' and n.nspname in ('raw', 'staging', 'marts')
            order by 2 desc
            """
        ).fetchall()
        rows = [
            (name, conn.execute(f"select count(*) from {name}").fetchone()[0], size)
            for name, size in tables
        ]
    return [
        {
            "table": name,
            "rows": count,
            "mib": round(size / 2**20, 1),
            "rows_per_1000_threads": round(count / threads * 1000),
            "mib_per_1000_threads": round(size / 2**20 / threads * 1000, 2),
        }
        for name, count, size in rows
    ]


def index_refresh(url: str, work: Path, repo_id: int, *, full: bool = False) -> dict:
    """The search index brought up to the marts (serve/lexical), as the daemon or
    `relored index` does it, read through the reader role: its wall time and size."""
    from relore.serve.lexical import store

    indexes = store.for_connection_url(database.reader_url(url, env={}), work / "search-index")
    done = indexes.refresh(repo_id, full=full)
    repo_dir = indexes.reader(repo_id).repo_dir
    size = sum(f.stat().st_size for f in repo_dir.rglob("*") if f.is_file())
    return {
        "action": done.action,
        "wall_s": round(done.seconds, 2),
        "threads": done.threads,
        "documents": done.documents,
        "size_mib": round(size / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=50_000)
    parser.add_argument("--comments-per-thread", type=int, default=40)
    parser.add_argument("--change", type=float, default=0.01, help="share of threads edited")
    parser.add_argument(
        "--keep", action="store_true", help="leave the cluster running (for serve_load.py)"
    )
    parser.add_argument(
        "--first-build-only",
        action="store_true",
        help="land, build and index once, then stop measuring and keep the cluster running",
    )
    parser.add_argument(
        "--work", type=Path, help="the directory for the cluster and index (default: a new temp)"
    )
    args = parser.parse_args()
    args.keep = args.keep or args.first_build_only
    work = args.work or Path(tempfile.mkdtemp(prefix="relore-build-"))
    work.mkdir(parents=True, exist_ok=True)
    paths = database.EmbeddedPaths(work / "pg")
    url = database.start_embedded(paths)
    try:
        with psycopg.connect(url) as conn:
            settings = dict(
                conn.execute(
                    "select name, setting from pg_settings where name in "
                    "('shared_buffers', 'work_mem', 'maintenance_work_mem', 'max_wal_size')"
                ).fetchall()
            )
        world = corpus.generate(
            seed=1, threads=args.threads, comments_per_thread=args.comments_per_thread
        )
        repo = Repo(world.repo_id, world.repo_payload["full_name"])
        start = time.perf_counter()
        landed = land_corpus(url, world, repo)
        # A history lands over months, not in the minute before the first build: an index
        # kept by polls lands each object soon after GitHub last changed it. Spread the
        # loads that way, newest two days ago, so the builds' one-hour lookback holds only
        # what arrives after the first build (a constant shift would keep the whole
        # minutes-long landing inside one hour and make the next build a full one).
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SPREAD_LOADS)
        report = {"threads": args.threads, "payloads_landed": landed,
                  "land_s": round(time.perf_counter() - start, 1), "postgres": settings}  # fmt: skip
        report["full_build"] = dbt_build(url, work)
        report["index_full"] = index_refresh(url, work, repo.repo_id)
        if not args.first_build_only:
            measure_changes(report, url, work, world, repo, args)
        report["sizes"] = sizes(url, args.threads)
        if args.keep:  # stop it: RELORE_HOME=<work>/pg relored db stop
            report["database_url"] = url
            report["work"] = str(work)
        report["measured_at"] = provenance.facts()
        print(json.dumps(report, indent=2))
    finally:
        if not args.keep:
            database.stop_embedded(paths)


def measure_changes(report: dict, url: str, work: Path, world, repo: Repo, args) -> None:
    """A share of the threads edited, then the incremental and no-op builds and the index's
    refreshes and rebuild."""
    rng = random.Random(7)
    numbers = rng.sample(range(1, args.threads + 1), max(1, int(args.threads * args.change)))
    for number in numbers:
        world.add_comment(number, f"A follow-up on #{number}: the retry still fails.")
    report["changed_threads"] = len(numbers)
    report["changed_payloads_landed"] = land_corpus(url, world, repo)
    report["incremental_build"] = dbt_build(url, work)
    report["index_refresh"] = index_refresh(url, work, repo.repo_id)
    report["noop_build"] = dbt_build(url, work)
    report["index_noop"] = index_refresh(url, work, repo.repo_id)
    report["index_rebuild"] = index_refresh(url, work, repo.repo_id, full=True)


if __name__ == "__main__":
    main()
