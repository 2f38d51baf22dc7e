"""The semantic tier's cost at scale: embedding from scratch, a no-op run, a 1% change, storage.

Over a database ``build_bench.py --keep`` left running (50,000 threads, 40 comments each):

    .venv/bin/python benchmarks/build_bench.py --threads 50000 --comments-per-thread 40 --keep
    .venv/bin/python benchmarks/semantic_bench.py --url <its database_url> --repo acme/widgets
    .venv/bin/python benchmarks/serve_load.py --url <…> --repo acme/widgets --cases question

1. ``relored embed``'s own function over every passage (the vectors of the repository are
   deleted first with ``--fresh``): wall time, passages and threads per second, the
   encoder's share of it, and the tokens it read;
2. a second run with nothing new (it embeds nothing);
3. 1% of the threads' opening posts edited (a new payload version each, landed by the real
   writer), ``dbt build``, and ``relored embed`` again: what it embedded and retired, and
   the time of each step;
4. the store's size: ``semantic.embeddings`` with its HNSW index, per 1,000 threads.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import build_bench  # noqa: E402
import provenance  # noqa: E402

from relore.extract.landing import RawObject, Repo, land  # noqa: E402
from relore.operate import embed  # noqa: E402
from relore.serve import repos  # noqa: E402


class TimedEncoder:
    """The encoder, with the seconds and tokens spent in it counted."""

    def __init__(self, encoder) -> None:
        self.encoder, self.seconds, self.tokens, self.texts = encoder, 0.0, 0, 0
        self.model_key, self.dimension = encoder.model_key, encoder.dimension

    def encode(self, texts):
        start = time.perf_counter()
        vectors = self.encoder.encode(texts)
        self.seconds += time.perf_counter() - start
        self.tokens += sum(self.encoder.tokens(texts))
        self.texts += len(texts)
        return vectors


def _progress(done: int, total: int, seconds: float) -> None:
    if done == total or done % 2048 < embed.BATCH:
        print(f"  {done:,} of {total:,} ({done / max(seconds, 1e-9):.1f}/s)", file=sys.stderr)


def _run(conn, encoder, repo: str, repo_id: int) -> dict:
    timed = TimedEncoder(encoder)
    report = embed.embed_repo(conn, timed, repo, repo_id, _progress)
    threads = conn.execute(
        "select count(distinct thread_number) from marts.semantic_passages where repo_id = %s",
        (repo_id,),
    ).fetchone()[0]
    return {
        "embedded": report.embedded,
        "retired": report.retired,
        "vectors": report.vectors,
        "wall_s": report.seconds,
        "encoder_s": round(timed.seconds, 1),
        "tokens": timed.tokens,
        "passages_per_s": round(report.embedded / report.seconds, 1) if report.embedded else None,
        "threads_with_passages": threads,
    }


def _edit_opening_posts(url: str, repo_id: int, share: float) -> int:
    """A new version of ``share`` of the repository's issues, each body with a sentence more."""
    with psycopg.connect(url, autocommit=True) as conn:
        name = conn.execute(
            "select repo from marts.corpus_stats where repo_id = %s", (repo_id,)
        ).fetchone()[0]
        rows = conn.execute(
            """
            select distinct on (object_id) object_id, thread_number, payload
            from raw.github_objects
            where repo_id = %s and object_type = 'issue' and not is_deleted
            order by object_id, row_id desc
            """,
            (repo_id,),
        ).fetchall()
        chosen = random.Random(11).sample(rows, max(1, int(len(rows) * share)))
        objects = []
        for object_id, number, payload in chosen:
            payload = dict(payload)
            payload["body"] = (payload.get("body") or "") + (
                "\n\nUpdate: the workaround stopped helping after the last upgrade."
            )
            objects.append(RawObject("issue", object_id, number, payload))
        with conn.transaction(), conn.cursor() as cur:
            return land(cur, Repo(repo_id, name), "bench", objects)


def _store_size(conn, threads: int) -> dict:
    table, index = conn.execute(
        "select pg_table_size('semantic.embeddings'), pg_indexes_size('semantic.embeddings')"
    ).fetchone()
    return {
        "table_mib": round(table / 2**20, 1),
        "indexes_mib": round(index / 2**20, 1),
        "mib_per_1000_threads": round((table + index) / 2**20 / threads * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the writer's URL")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--change", type=float, default=0.01, help="share of threads edited")
    parser.add_argument("--fresh", action="store_true", help="delete the repo's vectors first")
    args = parser.parse_args()
    encoder = embed.load_encoder()
    report: dict = {"model": encoder.model_key}
    with psycopg.connect(args.url, autocommit=True) as conn:
        embed.ensure_store(conn, encoder.dimension)
        [(repo_id, repo)] = repos.targets(conn, args.repo)
        if args.fresh:
            conn.execute("delete from semantic.embeddings where repo_id = %s", (repo_id,))
            conn.execute("vacuum semantic.embeddings")
        report["from_scratch"] = _run(conn, encoder, repo, repo_id)
        threads = report["from_scratch"]["threads_with_passages"]
        report["store"] = _store_size(conn, threads)
        report["noop"] = _run(conn, encoder, repo, repo_id)
    report["changed_payloads_landed"] = _edit_opening_posts(args.url, repo_id, args.change)
    with tempfile.TemporaryDirectory(prefix="relore-semantic-") as work:
        report["changed_build"] = build_bench.dbt_build(args.url, Path(work))
    with psycopg.connect(args.url, autocommit=True) as conn:
        report["changed_embed"] = _run(conn, encoder, repo, repo_id)
    report["measured_at"] = provenance.facts()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
