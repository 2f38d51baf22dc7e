"""The read service under concurrent load, beside the same work run straight on Postgres.

For each case (the search-core issue's query classes, and a thread page) a load
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
import itertools
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import provenance
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fixtures import daemon as daemons

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


VARIANTS = 20  # distinct requests per case, cycled: no case is one query answered again


def cases(url: str, repo: str) -> dict[str, tuple[str, list[dict]]]:
    """Each query class of the search-core issue, as ``VARIANTS`` realistic requests read
    from the index itself: rare and frequent words (by document frequency), 2-6-word
    questions of mid-frequency words, 10-40-word descriptions, a signal filter with a frequent word, a pasted error
    line, a pasted traceback, and a long thread's page."""
    with psycopg.connect(url) as conn:
        repo_id = conn.execute(
            "select repo_id from marts.corpus_stats where lower(repo) = lower(%s)", (repo,)
        ).fetchone()[0]
        documents = conn.execute(
            "select documents from marts.corpus_stats where repo_id = %s", (repo_id,)
        ).fetchone()[0]

        def column(sql: str, *params) -> list:
            return [row[0] for row in conn.execute(sql, (repo_id, *params)).fetchall()]

        def words(low: int, high: int, order: str = "documents desc") -> list[str]:
            return column(
                f"""select lexeme from marts.lexeme_stats
                where repo_id = %s and documents between %s and %s and lexeme ~ '^[a-z]{{4,}}$'
                order by {order}, lexeme limit %s""",
                low,
                high,
                VARIANTS * 6,
            )

        def most_threads(table: str, name: str) -> list:
            return column(
                f"select {name} from marts.{table} where repo_id = %s "
                "group by 1 order by count(*) desc limit %s",
                VARIANTS,
            )

        rare = words(3, 30)[:VARIANTS]
        frequent = words(documents // 20, documents)[:VARIANTS]
        middle = words(documents // 1000, documents // 20, "md5(lexeme)")
        errors = most_threads("thread_errors", "normal_form")
        files = most_threads("thread_files", "path")
        # files named in a median number of threads (the most-named one sits in most threads
        # of this synthetic corpus, far more than any file of a real repository)
        typical_files = column(
            """select path from (
                select path, count(*) as n, ntile(2) over (order by count(*)) as half
                from marts.thread_files where repo_id = %s group by path
            ) as f where half = 2 order by n, path limit %s""",
            VARIANTS,
        )
        numbers = most_threads("documents", "thread_number")
        bodies = column(
            """select body_text from marts.documents
            where repo_id = %s and body_text like '%%Traceback (most recent call last)%%'
            limit %s""",
            VARIANTS * 5,
        )
    error_lines, tracebacks = [], []
    for body in bodies:
        text = body[body.index("Traceback") :]
        lines = text.splitlines()
        error = next((x for x in lines if re.match(r"\s*[\w.]*(Error|Exception)\b.*:", x)), None)
        if error and len(error_lines) < VARIANTS:
            error_lines.append(error.strip())
        if len(tracebacks) < VARIANTS:
            tracebacks.append(text[:1500])
    questions = [" ".join(middle[i * 4 : i * 4 + 2 + i % 5]) for i in range(VARIANTS)]
    # asked as a person asks: 3+ words and no filter, so the semantic tier is fused in
    sentences = [
        f"why does the {middle[i]} {middle[i + 1]} stop working after {middle[i + 2]}"
        for i in range(VARIANTS)
    ]
    # a description of a change or a "why" as an agent writes one: 10-40 words, mid-frequency
    # words with a few frequent ones, no filter (#36: every document carrying any of them
    # ranks)
    mixed = [w for pair in itertools.zip_longest(middle, frequent) for w in pair if w]
    longs = [
        " ".join(mixed[(i * 7 + j) % len(mixed)] for j in range(10 + (i * 3) % 31))
        for i in range(VARIANTS)
    ]
    search = "/api/v1/search"

    def asked(**each) -> list[dict]:
        return [
            {**{k: v[i % len(v)] for k, v in each.items()}, "repo": repo} for i in range(VARIANTS)
        ]

    return {
        "rare word": (search, asked(q=rare)),
        "frequent word": (search, asked(q=frequent)),
        "question (2-6 words)": (search, asked(q=questions)),
        "question as a sentence (fused)": (search, asked(q=sentences)),
        "long description (10-40 words)": (search, asked(q=longs)),
        "--error + frequent word": (search, asked(q=frequent, error=errors)),
        "--file + frequent word": (search, asked(q=frequent, file=files)),
        "--file (median file) + frequent word": (search, asked(q=frequent, file=typical_files)),
        "pasted error line": (search, asked(q=error_lines)),
        "pasted traceback (legs)": (search, asked(q=tracebacks)),
        "thread page": ("/api/v1/thread", asked(number=[str(n) for n in numbers])),
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


async def _http_load(base: str, path: str, asked: list, concurrency: int, seconds: float):
    import httpx

    limits = httpx.Limits(max_connections=concurrency)
    headers = {"x-relore-client": __version__}
    turn = itertools.cycle(asked)
    async with httpx.AsyncClient(base_url=base, limits=limits, headers=headers) as client:

        async def call() -> bool:
            response = await client.get(path, params=next(turn), timeout=60)
            return response.status_code == 200

        for _ in asked:  # warm: every variant once
            await call()
        return await _drive(call, concurrency, seconds)


async def _sql_load(reader: str, path: str, asked: list, concurrency: int, seconds: float):
    from relore.serve import search, thread

    connections = [
        await psycopg.AsyncConnection.connect(reader, autocommit=True) for _ in range(concurrency)
    ]
    idle = asyncio.Queue()
    for conn in connections:
        idle.put_nowait(conn)

    turn = itertools.cycle(asked)

    async def call() -> bool:
        conn = await idle.get()
        params = next(turn)
        try:
            if path.endswith("/search"):
                await search.search(conn, search.parse_request(params))
            else:
                await thread.thread(conn, thread.parse_request(params))
            return True
        finally:
            idle.put_nowait(conn)

    for _ in asked:  # warm: every variant once
        await call()
    try:
        return await _drive(call, concurrency, seconds)
    finally:
        for conn in connections:
            await conn.close()


def client_main(args) -> None:
    params = json.loads(args.params)
    if args.client == "http":
        result = _http_load(args.base, args.path, params, int(args.concurrency), args.seconds)
    else:
        result = _sql_load(args.reader, args.path, params, int(args.concurrency), args.seconds)
    print(json.dumps(asyncio.run(result)))


# --- the conductor ----------------------------------------------------------------------------


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
    parser.add_argument(
        "--concurrency", default="1,8", help="clients per case: one figure, or several, a,b"
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--cold-runs", type=int, default=10)
    parser.add_argument(
        "--cases", help="only the cases whose name holds this text (and no cold start)"
    )
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
    port = daemons.free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RELORE_READER_DATABASE_URL": reader, "RELORE_API": base}
    env.pop("RELORE_API_TOKENS", None)
    with daemons.serving(env, port=port):
        with psycopg.connect(args.url) as conn:
            documents = conn.execute("select count(*) from marts.documents").fetchone()[0]
        levels = [int(x) for x in str(args.concurrency).split(",")]
        report: dict = {
            "documents": documents,
            "concurrency": levels,
            "seconds_per_case": args.seconds,
            "variants_per_case": VARIANTS,
        }
        for name, (path, asked) in cases(args.url, args.repo).items():
            if args.cases and args.cases not in name:
                continue
            for level in levels:
                run = argparse.Namespace(**{**vars(args), "concurrency": level})
                http = _load("http", path, asked, run, base, reader)
                sql = _load("sql", path, asked, run, base, reader)
                report.setdefault(name, {})[f"{level} client(s)"] = {
                    "service": http,
                    "direct": sql,
                    "p50_ratio": round(http["p50_ms"] / sql["p50_ms"], 2),
                    "throughput_ratio": round(http["req_per_s"] / sql["req_per_s"], 2),
                }
                print(f"{name} x{level}: service {http} direct {sql}", file=sys.stderr)
        if not args.cases:
            report["cold_start"] = _cold_start(env, args.repo, args.cold_runs)
        report["measured_at"] = provenance.facts()
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
