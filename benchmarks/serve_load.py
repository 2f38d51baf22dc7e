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
from fixtures import corpus_text
from fixtures import daemon as daemons

from relore.contract.version import __version__
from relore.operate import database
from relore.serve import ranking

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
    questions of mid-frequency words, 10-40-word descriptions (of words, and of changes in
    the generator's vocabulary), a file described, a signal filter with a frequent word, a
    pasted error line, a pasted traceback, a long thread's page, and the change
    descriptions asked of ``precedent``."""
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
                "group by 1 order by count(*) desc, 1 limit %s",
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
                select path, count(*) as n, ntile(2) over (order by count(*), path) as half
                from marts.thread_files where repo_id = %s group by path
            ) as f where half = 2 order by n, path limit %s""",
            VARIANTS,
        )
        numbers = most_threads("documents", "thread_number")
        # symbols named in a median number of threads, as a description names one
        symbols = column(
            """select symbol from (
                select symbol, count(*) as n, ntile(2) over (order by count(*), symbol) as half
                from marts.thread_symbols where repo_id = %s group by symbol
            ) as f where half = 2 order by n, symbol limit %s""",
            VARIANTS,
        ) or ["send"]
        bodies = column(
            """select body_text from marts.documents
            where repo_id = %s and body_text like '%%Traceback (most recent call last)%%'
            order by document_id
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
    # a change described or a question asked as an agent writes one, in the generator's own
    # vocabulary (its topics, failures, exceptions, and the symbols and files its threads
    # name): 10-40 lexemes, each variant different, no filter, not a pasted error (fused)
    described = _descriptions(url, symbols)
    # a path the corpus knows, named in a sentence about it: the file leg of a fused page
    about_files = [
        _FILE_SENTENCES[i % len(_FILE_SENTENCES)].format(
            path=(typical_files or files)[i % len(typical_files or files)],
            **_vocabulary(i),
        )
        for i in range(VARIANTS)
    ]
    search = "/api/v1/search"
    precedent = "/api/v1/precedent"

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
        "change description (10-40 lexemes, fused)": (search, asked(q=described)),
        "file described (path + sentence, fused)": (search, asked(q=about_files)),
        "--error + frequent word": (search, asked(q=frequent, error=errors)),
        "--file + frequent word": (search, asked(q=frequent, file=files)),
        "--file (median file) + frequent word": (search, asked(q=frequent, file=typical_files)),
        "pasted error line": (search, asked(q=error_lines)),
        "pasted traceback (legs)": (search, asked(q=tracebacks)),
        "thread page": ("/api/v1/thread", asked(number=[str(n) for n in numbers])),
        # the same change descriptions asked for the earlier pull requests of their kind
        "precedent (change description, 10-40 lexemes)": (precedent, asked(q=described)),
    }


def scoped(asked: list[dict], scope: str) -> list[dict]:
    """Each search as the scope asks it: of its repository, of the repository's owner, or of
    every repository (no repo named)."""
    if scope == "repo":
        return asked
    owner = {"org": lambda p: {"org": p["repo"].split("/")[0]}, "every": lambda p: {}}[scope]
    return [{**{k: v for k, v in p.items() if k != "repo"}, **owner(p)} for p in asked]


def _vocabulary(i: int) -> dict[str, str]:
    """The i-th pick of the generator's topics, failures and exceptions (corpus_text)."""
    topics, verbs = corpus_text.TOPICS, corpus_text.VERBS
    exceptions = [name.rsplit(".", 1)[-1] for name, _ in corpus_text.EXCEPTIONS]
    return {
        "t0": topics[i % len(topics)],
        "t1": topics[(i * 3 + 1) % len(topics)],
        "t2": topics[(i * 7 + 4) % len(topics)],
        "v0": verbs[i % len(verbs)],
        "v1": verbs[(i * 5 + 2) % len(verbs)],
        "e0": exceptions[(i * 2 + 1) % len(exceptions)],
        "n": str(2 + i % 14),
    }


# sentences as an agent describes a change it plans, or asks how one was made (a question
# word first or "I" makes the shape a question; the rest are descriptions)
_DESCRIPTIONS = (
    "make {t0} back off and retry when {t1} {v0}, instead of letting `{s0}` raise {e0}",
    "stop {t0} from re-reading {t1} on every request: with {n} workers it {v0} and `{s0}` "
    "ends in {e0} once {t2} is enabled",
    "add a setting to turn off {t0} in production next to the one for {t1}, and document "
    "how it interacts with {t2} when the server {v0} under load",
    "refactor `{s0}` so that {t0} no longer {v0} after {t1} is switched on; keep the old "
    "behaviour behind a flag and add a test for the error path",
    "why does {t0} {v0} under load when {t1} is enabled, and where does `{s0}` raise {e0}",
    "fix the regression where {t0} {v1} after the last release: `{s0}` closes the "
    "transport before {t1} has flushed, which shows up as {e0} in the logs of every worker, "
    "and the retry then {v0}",
    "how was {t0} made configurable, and which pull request moved the timeout out of `{s0}`",
    "{t0} {v0} when the peer disconnects; close the transport in `{s0}` before {t1} gives "
    "the connection back",
    "I want {t0} to stop double counting rows when {t1} {v1}: `{s0}` reads the whole "
    "response before the timeout, so a slow peer makes {t2} raise {e0}; was this tried "
    "before, and why was it reverted",
    "speed up {t0} by caching the parsed headers in `{s0}` instead of parsing them again "
    "for every chunk, while {t1} still sees fresh data",
)

_FILE_SENTENCES = (
    "{path}: {t0} {v0} when {t1} is enabled, so the change closes the transport first",
    "the code in {path} retries {t0} after {e0}; why was that added instead of failing fast",
    "in {path}, stop re-reading {t1} on every request because it {v1} under load",
    "{path} keeps {t0} open after the peer disconnects and {t2} then {v0}",
)


def _descriptions(url: str, symbols: list[str]) -> list[str]:
    """VARIANTS change descriptions and questions of 10-40 lexemes (as Postgres counts
    them), no two alike."""

    def said(i: int) -> str:
        template = _DESCRIPTIONS[i % len(_DESCRIPTIONS)]
        return template.format(s0=symbols[i % len(symbols)], **_vocabulary(i))

    with psycopg.connect(url) as conn:

        def lexemes(text: str) -> int:
            return conn.execute(
                "select cardinality(tsvector_to_array(to_tsvector('english', %s)))", (text,)
            ).fetchone()[0]

        texts = []
        for i in range(VARIANTS):
            text = said(i)
            if i % 3 == 2:  # every third told at length: a second sentence, up to 40 lexemes
                longer = f"{text}. Also, {said(i + 5)}"
                text = longer if lexemes(longer) <= 40 else text
            texts.append(text)
        counts = [lexemes(t) for t in texts]
    assert all(10 <= c <= 40 for c in counts), list(zip(counts, texts, strict=True))
    assert len(set(texts)) == len(texts)
    return texts


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


async def _pooled(reader: str, asked: list, concurrency: int, seconds: float, ask, warm: int):
    """``ask(conn, params)`` over ``concurrency`` reader connections, the requests in turn,
    after ``warm`` of them."""
    connections = [
        await psycopg.AsyncConnection.connect(reader, autocommit=True) for _ in range(concurrency)
    ]
    idle = asyncio.Queue()
    for conn in connections:
        await conn.execute("set statement_timeout = '60s'")
        idle.put_nowait(conn)
    turn = itertools.cycle(asked)

    async def call() -> bool:
        conn = await idle.get()
        try:
            await ask(conn, next(turn))
            return True
        finally:
            idle.put_nowait(conn)

    for _ in range(warm):
        await call()
    try:
        return await _drive(call, concurrency, seconds)
    finally:
        for conn in connections:
            await conn.close()


async def _sql_load(reader: str, path: str, asked: list, concurrency: int, seconds: float):
    from relore.serve import precedent, search, thread

    async def ask(conn, params: dict) -> None:
        if path.endswith("/search"):
            await search.search(conn, search.parse_request(params))
        elif path.endswith("/precedent"):
            await precedent.precedent(conn, precedent.parse_request(params))
        else:
            await thread.thread(conn, thread.parse_request(params))

    # warm: every variant once
    return await _pooled(reader, asked, concurrency, seconds, ask, len(asked))


# The alternative a user has without relore's index: Postgres full-text search over the same
# documents (the marts' search_vector, its GIN index), ranked by ts_rank. A few words are the
# conjunction (websearch_to_tsquery), as a lexical-first page starts; three lexemes or more
# are what a fused page's words leg ranks: every document holding any of them, a thread by
# its best document. Either way the page's ten hits get a ts_headline, and the matches are
# counted. For precedent the same over the documents of closed pull requests, five hits.
FTS = """
with q as (
    select case when %(any)s then (
        select string_agg({quoted}, ' | ')
        from unnest(tsvector_to_array(to_tsvector('english', %(text)s))) as x
    )::tsquery else websearch_to_tsquery('english', %(text)s) end as query
),
matched as materialized (
    select d.thread_number, d.document_id, ts_rank(d.search_vector, q.query) as score
    from marts.documents as d, q
    where d.repo_id = %(repo_id)s and not d.is_deleted and d.search_vector @@ q.query{only}
),
best as (
    select distinct on (thread_number) thread_number, document_id, score
    from matched
    order by thread_number, score desc
),
page as (select * from best order by score desc limit {limit})
select p.thread_number, p.document_id, p.score,
    ts_headline('english', d.body_text, q.query) as snippet,
    (select count(*) from matched) as total
from page as p
join marts.documents as d on d.repo_id = %(repo_id)s and d.document_id = p.document_id
cross join q
order by p.score desc
""".replace("{quoted}", ranking.QUOTED.format("x").removesuffix("::tsquery"))
_CLOSED_PULLS = """
        and exists (
            select 1 from marts.threads as t
            where t.repo_id = d.repo_id and t.number = d.thread_number and t.kind = 'pr'
                and t.state in ('merged', 'closed') and not t.is_deleted
        )"""
FTS_SEARCH = FTS.replace("{only}", "").replace("{limit}", "10")
FTS_PRECEDENT = FTS.replace("{only}", _CLOSED_PULLS).replace("{limit}", "5")


def fts_eligible(path: str, asked: list[dict]) -> bool:
    """Cases the alternative can answer: words only (no filter), not a pasted failure."""
    from relore.serve import search

    return path.endswith(("/search", "/precedent")) and all(
        set(a) == {"q", "repo"} and not search.looks_like_a_failure(a["q"]) for a in asked
    )


async def _fts_load(reader: str, path: str, asked: list, concurrency: int, seconds: float):
    sql = FTS_PRECEDENT if path.endswith("/precedent") else FTS_SEARCH
    async with await psycopg.AsyncConnection.connect(reader) as conn:
        repo_id = (
            await (
                await conn.execute(
                    "select repo_id from marts.corpus_stats where lower(repo) = lower(%s)",
                    (asked[0]["repo"],),
                )
            ).fetchone()
        )[0]

    async def ask(conn, params: dict) -> None:
        text = params["q"]
        lexemes = await (
            await conn.execute(
                "select cardinality(tsvector_to_array(to_tsvector('english', %s)))", (text,)
            )
        ).fetchone()
        found = {"text": text, "repo_id": repo_id, "any": lexemes[0] >= 3}
        await (await conn.execute(sql, found)).fetchall()

    # warm: two variants (one can take seconds)
    return await _pooled(reader, asked, concurrency, seconds, ask, 2)


def client_main(args) -> None:
    params = json.loads(args.params)
    if args.client == "http":
        result = _http_load(args.base, args.path, params, int(args.concurrency), args.seconds)
    elif args.client == "fts":
        result = _fts_load(args.reader, args.path, params, int(args.concurrency), args.seconds)
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
    parser.add_argument(
        "--scope",
        choices=("repo", "org", "every"),
        default="repo",
        help="ask each search of --repo (default), of its owner's repositories (org), or of "
        "every repository held (no repo): #39's search across repositories",
    )
    # the load process's own arguments
    parser.add_argument(
        "--alternative",
        action="store_true",
        help="also run each words-only case as Postgres full-text search (ts_rank)",
    )
    parser.add_argument("--client", choices=("http", "sql", "fts"))
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
            "scope": args.scope,
            "concurrency": levels,
            "seconds_per_case": args.seconds,
            "variants_per_case": VARIANTS,
        }
        for name, (path, asked) in cases(args.url, args.repo).items():
            if args.cases and args.cases not in name:
                continue
            if path.endswith("/search"):
                asked = scoped(asked, args.scope)
            for level in levels:
                run = argparse.Namespace(**{**vars(args), "concurrency": level})
                http = _load("http", path, asked, run, base, reader)
                sql = _load("sql", path, asked, run, base, reader)
                figures = report.setdefault(name, {})[f"{level} client(s)"] = {
                    "service": http,
                    "direct": sql,
                    "p50_ratio": round(http["p50_ms"] / sql["p50_ms"], 2),
                    "throughput_ratio": round(http["req_per_s"] / sql["req_per_s"], 2),
                }
                if args.alternative and fts_eligible(path, asked):
                    figures["postgres_fts"] = _load("fts", path, asked, run, base, reader)
                print(f"{name} x{level}: {json.dumps(figures)}", file=sys.stderr)
        if not args.cases:
            report["cold_start"] = _cold_start(env, args.repo, args.cold_runs)
        report["measured_at"] = provenance.facts()
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
