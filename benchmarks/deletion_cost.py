"""What noticing deletions costs in requests: the idle poll, a poll after deletions, a sweep.

One fake GitHub on loopback, one throwaway embedded Postgres. Figures per 1,000 threads:
every request the fake answered (``requests``), and those that cost rate limit (a 304 is
free). Deleting a comment leaves its thread's ``updated_at`` alone, as GitHub does.

    .venv/bin/python benchmarks/deletion_cost.py --threads 1000 --deletions 20
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

import provenance
import psycopg

from relore.extract import runner
from relore.extract.github_client import GitHubClient
from relore.extract.progress import Progress
from relore.operate import database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures import corpus, fake_github  # noqa: E402

REPO = "acme/deletions"


def _run(url: str, base_url: str, pass_name: str) -> runner.RunReport:
    client = GitHubClient(api_url=base_url, token="t", backoff=0.01, env={})
    with psycopg.connect(url, autocommit=True) as conn, client:
        report = runner.run(conn, client, REPO, pass_name, runner.Options(), Progress(None, client))
    if report.outcome != runner.DONE:
        raise SystemExit(f"{pass_name} failed: {report.error}")
    return report


def _measured(app, url: str, base_url: str, pass_name: str) -> dict:
    before = len(app.state.requests)
    report = _run(url, base_url, pass_name)
    asked = app.state.requests[before:]
    return {
        "requests": len(asked),
        "rate_limited": sum(r.status != 304 for r in asked),
        "written": report.written,
        "detail": "; ".join(s.detail for s in report.steps if s.detail),
    }


def _tombstones(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select count(*) from raw.github_objects "
            "where is_deleted and object_type in ('issue_comment', 'review_comment')"
        ).fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--deletions", type=int, default=20)
    args = parser.parse_args()
    world = corpus.generate(seed=5, threads=args.threads, repo=REPO, comments_per_thread=8)
    app = fake_github.create_app([world])
    rows = []
    with tempfile.TemporaryDirectory() as home, fake_github.serve(app) as base_url:
        paths = database.EmbeddedPaths(Path(home))
        url = database.start_embedded(paths)
        try:
            _run(url, base_url, "backfill")
            rows.append(("idle poll", _measured(app, url, base_url, "poll")))
            rng = random.Random(7)
            victims = rng.sample([c["id"] for c in world.comments], args.deletions)
            with app.state.lock:
                for cid in victims:
                    world.delete_comment(cid)
            pages = -(-args.threads // 100)
            for n in range(1, pages + 1):
                rows.append(
                    (
                        f"poll {n} after {args.deletions} deletions",
                        {**_measured(app, url, base_url, "poll"), "tombstones": _tombstones(url)},
                    )
                )
            rows.append(("first sweep", _measured(app, url, base_url, "sweep")))
            rows.append(("second sweep", _measured(app, url, base_url, "sweep")))
        finally:
            database.stop_embedded(paths)
    scale = 1000 / args.threads
    print(provenance.line())
    print(f"{args.threads} threads ({len(world.pull_numbers())} PRs), {args.deletions} deletions")
    print("| run | requests | rate-limited | per 1,000 threads | written | tombstones | detail |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, m in rows:
        print(
            f"| {name} | {m['requests']} | {m['rate_limited']} | "
            f"{m['requests'] * scale:.0f} / {m['rate_limited'] * scale:.0f} | {m['written']} | "
            f"{m.get('tombstones', '')} | {m['detail']} |"
        )


if __name__ == "__main__":
    main()
