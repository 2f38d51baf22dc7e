"""One token, an organisation: hours of budget a first backfill takes, and an idle hour's cost.

``--repos`` repositories of ``--threads`` threads beside one of ``--big``, served by one fake
GitHub with its real rate limits (``--limit`` requests an hour, core and GraphQL) on a
simulated clock: each `relored cycle` (extract/schedule.py) runs in the window it finds,
then the clock moves to the window's reset; nothing waits. Figures: the cycles (hours) the
backfill took against the fewest the limit allows (requests that cost the limit ÷ limit),
each full hour's share of the limit spent, GitHub's refusals (403/429: should be 0), and
what an idle cycle costs per repository once everything is in. One JSON line last.

    .venv/bin/python benchmarks/org_budget.py --repos 100 --threads 500 --big 5000
    # toy: seconds
    .venv/bin/python benchmarks/org_budget.py --repos 3 --threads 12 --big 60 --limit 150
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import provenance
import psycopg

from relore.extract import runner, schedule
from relore.extract.github_client import GitHubClient
from relore.extract.progress import Progress
from relore.operate import database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures import corpus, fake_github  # noqa: E402
from fixtures.sim_clock import SimClock  # noqa: E402


def _spent(requests, graphql: bool = False) -> int:
    """Requests that cost a bucket's limit (core, else GraphQL's): a 304 and /rate_limit
    cost nothing."""
    return sum(
        1
        for r in requests
        if r.status != 304 and r.path != "/rate_limit" and r.path.endswith("/graphql") == graphql
    )


def _cycle(url, base_url, clock, names) -> schedule.CycleReport:
    client = GitHubClient(
        api_url=base_url, token="t", backoff=0.01, env={}, clock=clock, sleep=clock.sleep
    )
    with psycopg.connect(url, autocommit=True) as conn, client:
        return schedule.run_cycle(conn, client, names, runner.Options(), Progress(None, client))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--threads", type=int, default=300)
    parser.add_argument("--big", type=int, default=5000, help="threads of the big repository")
    parser.add_argument("--comments-per-thread", type=int, default=6)
    parser.add_argument("--limit", type=int, default=5000, help="requests an hour")
    parser.add_argument("--max-hours", type=int, default=500)
    args = parser.parse_args()
    started = time.monotonic()
    worlds = [
        corpus.generate(
            seed=100 + i,
            threads=args.threads,
            repo=f"org/repo{i:03d}",
            comments_per_thread=args.comments_per_thread,
        )
        for i in range(args.repos)
    ]
    worlds.append(
        corpus.generate(
            seed=7, threads=args.big, repo="org/big", comments_per_thread=args.comments_per_thread
        )
    )
    names = [w.full_name for w in worlds]
    clock = SimClock()
    app = fake_github.create_app(worlds, rate_limit=args.limit, graphql_limit=args.limit,
                                 clock=clock)  # fmt: skip
    hours: list[dict] = []
    with tempfile.TemporaryDirectory() as home, fake_github.serve(app) as base_url:
        paths = database.EmbeddedPaths(Path(home))
        url = database.start_embedded(paths)
        try:
            while len(hours) < args.max_hours:
                before = len(app.state.requests)
                report = _cycle(url, base_url, clock, names)
                hours.append(
                    {
                        "spent": _spent(app.state.requests[before:]),
                        "graphql_spent": _spent(app.state.requests[before:], graphql=True),
                        "requests": len(app.state.requests) - before,
                        "outcome": report.outcome,
                        "behind": len(report.behind),
                    }
                )
                print(json.dumps({"hour": len(hours), **hours[-1]}), flush=True)
                reset = report.budget["core"].reset
                clock.advance(max(1.0, (reset or clock()) - clock() + 1))
                if report.outcome == runner.DONE:
                    break
            idle = []
            for _ in range(2):
                before = len(app.state.requests)
                report = _cycle(url, base_url, clock, names)
                asked = app.state.requests[before:]
                idle.append(_spent(asked) + _spent(asked, graphql=True))
                clock.advance(3600)
        finally:
            database.stop_embedded(paths)
    spent = sum(h["spent"] for h in hours)
    full = hours[:-1]
    fewest = math.ceil(spent / args.limit)
    refused = sum(1 for r in app.state.requests if r.status in (403, 429))
    summary = {
        "measured_at": provenance.facts(),
        "repos": len(worlds),
        "threads": args.repos * args.threads + args.big,
        "limit_per_hour": args.limit,
        "backfill_hours": len(hours),
        "backfill_spent": spent,
        "fewest_hours": fewest,
        "hours_over_fewest": round(len(hours) / fewest, 3),
        "full_hour_share_spent": round(sum(h["spent"] for h in full) / (len(full) * args.limit), 4)
        if full
        else None,
        "refused_403_429": refused,
        "idle_spent_per_repo": [round(s / len(worlds), 3) for s in idle],
        "wall_s": round(time.monotonic() - started, 1),
    }
    print(provenance.line())
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
