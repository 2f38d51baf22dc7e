"""Read latency on a built index: search (plain, filtered, widened, traceback) and thread.

Runs the real app in-process on the reader role against an existing database, so the
figure is the service's own work (SQL + ranking + envelope), without a network hop.

    .venv/bin/python benchmarks/search_latency.py --url postgresql://postgres@/relore?host=... \
        --repo acme/widgets --runs 50
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

import psycopg

from relore.client.version import __version__
from relore.extract import database
from relore.serve.app import Settings, create_app


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the writer's URL (the reader is derived)")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    with psycopg.connect(args.url) as conn:
        error = conn.execute("select normal_form from marts.thread_errors limit 1").fetchone()[0]
        number = conn.execute(
            "select thread_number from marts.documents group by 1 order by count(*) desc limit 1"
        ).fetchone()[0]
        body = conn.execute(
            "select body_text from marts.documents "
            "where body_text like '%Traceback (most recent call last)%' limit 1"
        ).fetchone()[0]
        documents = conn.execute("select count(*) from marts.documents").fetchone()[0]
    traceback = body[body.index("Traceback") :][:1500]
    cases = {
        "search plain": {"q": "timeout retry connection", "repo": args.repo},
        "search filtered (--error)": {"q": "fails", "error": error, "repo": args.repo},
        "search widened": {"q": "timeout zyzzogeton", "repo": args.repo},
        "search traceback (legs)": {"q": traceback, "repo": args.repo},
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    reader = database.reader_url(args.url, env={})
    results = {"documents": documents}
    with TestClient(create_app(Settings(reader))) as client:
        client.headers["x-relore-client"] = __version__

        def measure(path: str, params: dict) -> dict:
            client.get(path, params=params)  # warm
            timings = []
            for _ in range(args.runs):
                start = time.perf_counter()
                response = client.get(path, params=params)
                timings.append((time.perf_counter() - start) * 1000)
                assert response.status_code == 200, response.text
            return {
                "p50_ms": round(statistics.median(timings), 1),
                "p95_ms": round(percentile(timings, 0.95), 1),
                "p99_ms": round(percentile(timings, 0.99), 1),
            }

        for name, params in cases.items():
            results[name] = measure("/api/v1/search", params)
        results["thread page"] = measure("/api/v1/thread", {"repo": args.repo, "number": number})
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
