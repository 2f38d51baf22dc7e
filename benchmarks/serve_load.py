"""The read service under concurrent load, beside the same work run straight on Postgres.

For each case (search: plain, filtered, widened, traceback-expanded; thread page) a load
process separate from the server sends requests from ``--concurrency`` workers for
``--seconds``; p50/p95/p99 latency and requests/s come from that process. The same case then
runs as ``serve``'s own query functions on direct reader connections (no HTTP, no ASGI, no
envelope) from another process with the same concurrency: the ratio is what the service
adds. Last, the client's cold start: ``relore --help`` and one ``relore search`` over HTTP.

    .venv/bin/python benchmarks/serve_load.py --url <writer URL> --repo acme/widgets

Every process shares the machine's cores with Postgres and the server; compare ratios
measured in one run, never absolute figures across machines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from relore.contract.version import __version__
from relore.operate import database

BIN = Path(sys.executable).parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(timings_ms: list[float], seconds: float, errors: int) -> dict:
    return {
        "requests": len(timings_ms),
        "errors": errors,
        "req_per_s": round(len(timings_ms) / seconds, 1),
        "p50_ms": round(statistics.median(timings_ms), 1),
        "p95_ms": round(percentile(timings_ms, 0.95), 1),
        "p99_ms": round(percentile(timings_ms, 0.99), 1),
    }


def cases(url: str, repo: str) -> dict[str, tuple[str, dict]]:
    """Read the index for realistic inputs: a stored error line, a traceback, a long thread."""
    with psycopg.connect(url) as conn:
        error = conn.execute("select normal_form from marts.thread_errors limit 1").fetchone()[0]
        number = conn.execute(
            "select thread_number from marts.documents group by 1 order by count(*) desc limit 1"
        ).fetchone()[0]
        body = conn.execute(
            "select body_text from marts.documents "
            "where body_text like '%Traceback (most recent call last)%' limit 1"
        ).fetchone()[0]
    traceback = body[body.index("Traceback") :][:1500]
    return {
        "search plain": ("/api/v1/search", {"q": "timeout retry connection", "repo": repo}),
        "search filtered (--error)": (
            "/api/v1/search",
            {"q": "fails", "error": error, "repo": repo},
        ),
        "search widened": ("/api/v1/search", {"q": "timeout zyzzogeton", "repo": repo}),
        "search traceback (legs)": ("/api/v1/search", {"q": traceback, "repo": repo}),
        "thread page": ("/api/v1/thread", {"repo": repo, "number": str(number)}),
    }


# --- the load processes ---------------------------------------------------------------------


async def _drive(call, concurrency: int, seconds: float) -> dict:
    timings: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker():
        nonlocal errors
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            ok = await call()
            if ok:
                timings.append((time.perf_counter() - start) * 1000)
            else:
                errors += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return summary(timings, time.perf_counter() - started, errors)


async def _http_load(base: str, path: str, params: dict, concurrency: int, seconds: float):
    import httpx

    limits = httpx.Limits(max_connections=concurrency)
    headers = {"x-relore-client": __version__}
    async with httpx.AsyncClient(base_url=base, limits=limits, headers=headers) as client:

        async def call() -> bool:
            response = await client.get(path, params=params, timeout=60)
            return response.status_code == 200

        await call()  # warm
        return await _drive(call, concurrency, seconds)


async def _sql_load(reader: str, path: str, params: dict, concurrency: int, seconds: float):
    from relore.serve import search, thread

    connections = [
        await psycopg.AsyncConnection.connect(reader, autocommit=True) for _ in range(concurrency)
    ]
    idle = asyncio.Queue()
    for conn in connections:
        idle.put_nowait(conn)

    async def call() -> bool:
        conn = await idle.get()
        try:
            if path.endswith("/search"):
                await search.search(conn, search.parse_request(params))
            else:
                await thread.thread(conn, thread.parse_request(params))
            return True
        finally:
            idle.put_nowait(conn)

    await call()  # warm
    try:
        return await _drive(call, concurrency, seconds)
    finally:
        for conn in connections:
            await conn.close()


def client_main(args) -> None:
    params = json.loads(args.params)
    if args.client == "http":
        result = _http_load(args.base, args.path, params, args.concurrency, args.seconds)
    else:
        result = _sql_load(args.reader, args.path, params, args.concurrency, args.seconds)
    print(json.dumps(asyncio.run(result)))


# --- the conductor ----------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(base: str, server: subprocess.Popen) -> None:
    import httpx

    for _ in range(200):
        if server.poll() is not None:
            raise SystemExit(f"relored serve exited with {server.returncode}")
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("relored serve did not come up")


def _load(kind: str, path: str, params: dict, args, base: str, reader: str) -> dict:
    command = [
        sys.executable, __file__, "--client", kind, "--path", path,
        "--params", json.dumps(params), "--concurrency", str(args.concurrency),
        "--seconds", str(args.seconds), "--base", base, "--reader", reader,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the {kind} load process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def _cold_start(env: dict, repo: str, runs: int) -> dict:
    def timed(argv: list[str]) -> float:
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(argv, env=env, capture_output=True, check=False)
            samples.append((time.perf_counter() - start) * 1000)
        return round(statistics.median(samples), 1)

    relore = str(BIN / "relore")
    return {
        "relore --help (median ms)": timed([relore, "--help"]),
        "relore search (median ms)": timed([relore, "search", "timeout", "--repo", repo]),
        "python -c pass (median ms)": timed([sys.executable, "-c", "pass"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", help="the writer's URL (the reader is derived)")
    parser.add_argument("--repo")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--cold-runs", type=int, default=10)
    # the load process's own arguments
    parser.add_argument("--client", choices=("http", "sql"))
    parser.add_argument("--path")
    parser.add_argument("--params")
    parser.add_argument("--base")
    parser.add_argument("--reader")
    args = parser.parse_args()
    if args.client:
        client_main(args)
        return
    if not (args.url and args.repo):
        parser.error("--url and --repo are required")
    reader = database.reader_url(args.url, env={})
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RELORE_READER_DATABASE_URL": reader, "RELORE_API": base}
    env.pop("RELORE_API_TOKENS", None)
    server = subprocess.Popen(
        [str(BIN / "relored"), "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        _wait_up(base, server)
        with psycopg.connect(args.url) as conn:
            documents = conn.execute("select count(*) from marts.documents").fetchone()[0]
        report: dict = {
            "documents": documents,
            "concurrency": args.concurrency,
            "seconds_per_case": args.seconds,
        }
        for name, (path, params) in cases(args.url, args.repo).items():
            http = _load("http", path, params, args, base, reader)
            sql = _load("sql", path, params, args, base, reader)
            report[name] = {
                "service": http,
                "direct": sql,
                "p50_ratio": round(http["p50_ms"] / sql["p50_ms"], 2),
                "throughput_ratio": round(http["req_per_s"] / sql["req_per_s"], 2),
            }
            print(f"{name}: service {http} direct {sql}", file=sys.stderr)
        report["cold_start"] = _cold_start(env, args.repo, args.cold_runs)
        print(json.dumps(report, indent=2))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    main()
