"""How fast the read service says no: a saturated pool, a database that never came up, and one
stopped under the running daemon. Each figure is the time from sending a request to its 503
(in-process, Starlette's TestClient: the pool's wait is what is measured, not HTTP).

    .venv/bin/python benchmarks/serve_bounds.py

It starts its own embedded Postgres in a temporary directory and stops it again.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import statistics
import tempfile
import time
from pathlib import Path

import provenance
from starlette.testclient import TestClient

from relore.contract.version import __version__
from relore.operate import database
from relore.serve.app import Settings, create_app

HEADERS = {"x-relore-client": __version__}
DEAD = "postgresql://relore_reader@/relore?host=/nonexistent-relore-socket-dir"


def timed(client: TestClient, path: str) -> tuple[float, int, str]:
    started = time.monotonic()
    response = client.get(path, headers=HEADERS)
    return time.monotonic() - started, response.status_code, response.json().get("error", "")


def figures(rows: list[tuple[float, int, str]]) -> dict:
    seconds = [r[0] for r in rows]
    return {
        "requests": len(rows),
        "statuses": sorted({r[1] for r in rows}),
        "median_s": round(statistics.median(seconds), 3),
        "max_s": round(max(seconds), 3),
        "said": sorted({r[2] for r in rows}),
    }


def saturated(url: str, n: int, concurrency: int) -> dict:
    app = create_app(Settings(url, pool_min=2, pool_max=2))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.get("/healthz")
        pool = app.state.pool

        async def hold():
            async with pool.connection() as conn:
                await conn.execute("select pg_sleep(60)")

        holders = [client.portal.start_task_soon(hold) for _ in range(2)]
        time.sleep(0.5)
        with concurrent.futures.ThreadPoolExecutor(concurrency) as workers:
            rows = list(workers.map(lambda _: timed(client, "/api/v1/status"), range(n)))
        for holder in holders:
            holder.cancel()
    return figures(rows)


def never_up(n: int) -> dict:
    with TestClient(create_app(Settings(DEAD)), base_url="http://127.0.0.1") as client:
        rows = [timed(client, p) for _ in range(n) for p in ("/healthz", "/api/v1/status")]
    return figures(rows)


def stopped_under(paths: database.EmbeddedPaths, n: int) -> dict:
    app = create_app(Settings(paths.url(database="postgres"), pool_min=2, pool_max=2))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/healthz").status_code == 200
        database.stop_embedded(paths)
        rows = [timed(client, p) for _ in range(n) for p in ("/healthz", "/api/v1/status")]
    return figures(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = database.EmbeddedPaths(Path(tmp) / "pg")
        database.start_embedded(paths)
        try:
            report = {
                "saturated_pool": saturated(
                    paths.url(database="postgres"), args.requests * 4, args.concurrency
                ),
                "database_never_up": never_up(args.requests),
                "database_stopped_under_daemon": stopped_under(paths, args.requests),
            }
        finally:
            database.stop_embedded(paths)
    report["measured_at"] = provenance.facts()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
