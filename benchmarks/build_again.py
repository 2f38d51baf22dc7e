"""More `dbt build`s over the database a `build_bench.py --keep` run left: with nothing new,
or after some threads each got a comment. Each build's wall time, rows written, and where
its node time went (dbt's run_results), so one step of a change can be timed on the same
data as the step before it.

    .venv/bin/python benchmarks/build_again.py --url <database_url> --work <work> \
        [--change-threads 500] [--builds 2] [--full-refresh]

`database_url` and `work` are what `build_bench.py --keep` printed. With --change-threads N,
N threads taken at random get a new comment and a new `updated_at` on their issue, landed by
the real writer before the first build (as build_bench.py's 1 % step does). With
--full-refresh the first build is `dbt build --full-refresh`: every model derived again from
raw on the same data, to time a full build of one commit beside another's.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import random
import sys
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))

import build_bench
import provenance

from relore.extract.landing import RawObject, Repo, land


def land_comments(url: str, threads: int, seed: int) -> dict:
    """A comment on each of ``threads`` random threads, and their issues touched."""
    with psycopg.connect(url) as conn:
        repo_id, full_name = conn.execute(
            "select repo_id, repo from raw.github_objects where object_type = 'repository'"
            " order by row_id desc limit 1"
        ).fetchone()
        issues = conn.execute(
            "select distinct on (object_id) object_id, thread_number, payload"
            " from raw.github_objects where repo_id = %s and object_type = 'issue'"
            " order by object_id, row_id desc",
            (repo_id,),
        ).fetchall()
        template = conn.execute(
            "select payload from raw.github_objects"
            " where repo_id = %s and object_type = 'issue_comment' and payload is not null"
            " order by row_id limit 1",
            (repo_id,),
        ).fetchone()[0]
        newest = conn.execute(
            "select max(object_id) from raw.github_objects where object_type = 'issue_comment'"
        ).fetchone()[0]
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    chosen = random.Random(seed).sample(issues, min(threads, len(issues)))
    objects = []
    for i, (issue_id, number, payload) in enumerate(chosen, start=1):
        touched = dict(payload, updated_at=now, comments=(payload.get("comments") or 0) + 1)
        objects.append(RawObject("issue", issue_id, number, touched))
        comment_id = newest + i
        base = template["issue_url"].rsplit("/", 1)[0]
        comment = dict(
            template, id=comment_id, created_at=now, updated_at=now,
            body=f"A follow-up on #{number}: the retry still fails.",
            issue_url=f"{base}/{number}",
            url=template["url"].rsplit("/", 1)[0] + f"/{comment_id}",
        )  # fmt: skip
        objects.append(RawObject("issue_comment", comment_id, number, comment))
    with psycopg.connect(url) as conn, conn.transaction(), conn.cursor() as cur:
        landed = land(cur, Repo(repo_id, full_name), "bench", objects)
    return {"threads_changed": len(chosen), "payloads_landed": landed}


def timed_build(url: str, work: Path, top: int, *, full_refresh: bool = False) -> dict:
    done = build_bench.dbt_build(url, work, full_refresh=full_refresh)
    results = json.loads((work / "target" / "run_results.json").read_text())
    by_kind: collections.Counter = collections.Counter()
    for node in results["results"]:
        by_kind[node["unique_id"].split(".")[0]] += node["execution_time"]
    slowest = sorted(results["results"], key=lambda node: -node["execution_time"])[:top]
    return {
        **done,
        "dbt_elapsed_s": round(results["elapsed_time"], 1),
        "node_s": {kind: round(seconds, 1) for kind, seconds in sorted(by_kind.items())},
        "slowest": [[round(n["execution_time"], 2), n["unique_id"]] for n in slowest],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="database_url from build_bench.py --keep")
    parser.add_argument("--work", required=True, type=Path, help="work from build_bench --keep")
    parser.add_argument("--change-threads", type=int, default=0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--builds", type=int, default=1)
    parser.add_argument("--top", type=int, default=8, help="slowest nodes listed per build")
    parser.add_argument(
        "--full-refresh",
        action="store_true",
        help="the first build derives every mart again from staging (a full build on this data)",
    )
    args = parser.parse_args()
    report: dict = {"measured_at": provenance.facts()}
    if args.change_threads:
        report["change"] = land_comments(args.url, args.change_threads, args.seed)
    report["builds"] = [
        timed_build(args.url, args.work, args.top, full_refresh=args.full_refresh and i == 0)
        for i in range(args.builds)
    ]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
