"""``relored index``: build or refresh the search index of every repository (or one) now.

The daemon refreshes a repository's index itself when a search finds the marts written
since the index's marks; running this after ``dbt build`` moves that cost off the first
search (and builds a new host's or replica's index before it serves). Read with the reader
role: the index is derived from the marts alone.
"""

from __future__ import annotations

import json
import time
from typing import TextIO

import psycopg

from relore.operate.exits import ExitStatus
from relore.serve import repos
from relore.serve.lexical import generations, store

PROGRESS_EVERY_S = 2.0


def run(repo: str | None, full: bool, env, out: TextIO, err: TextIO, *, as_json: bool) -> int:
    from relore.operate import database

    try:
        limit = generations.shared_limit(env)
    except ValueError as exc:
        print(f"relored: {exc}", file=err)
        return ExitStatus.ERROR
    url = database.serving_reader_url(env)
    with psycopg.connect(url, autocommit=True) as conn:
        indexes = store.for_connection(conn, generations.index_root(env))
        try:
            targets = repos.targets(conn, repo)
        except psycopg.errors.UndefinedTable as exc:  # marts older than this release, or none
            print(
                f"relored: the marts this release reads are not built ({exc.diag.message_primary}):"
                " run dbt build",
                file=err,
            )
            return ExitStatus.ERROR
        if targets is None:
            print(f"relored: {repo} is not indexed here (run dbt build first)", file=err)
            return ExitStatus.ERROR
    names = dict(targets)
    shown = [time.monotonic()]

    def progress(repo_id: int, written: int) -> None:
        if time.monotonic() - shown[0] >= PROGRESS_EVERY_S:
            shown[0] = time.monotonic()
            print(f"{names[repo_id]}: {written:,} documents indexed…", file=err, flush=True)

    done_each = indexes.refresh_many(list(names), full=full, progress=progress, limit=limit)
    reports = []
    for repo_id, name in targets:
        done = done_each[repo_id]
        report = {
            "repo": name,
            "repo_id": repo_id,
            "action": done.action,
            "documents": done.documents,
            "threads": done.threads,
            "seconds": round(done.seconds, 2),
            "generation": done.generation,
            "index": "shared" if done.shared else "own",
            "path": str(indexes.root / (generations.SHARED if done.shared else str(repo_id))),
        }
        reports.append(report)
        if not as_json:
            what = {
                "built": f"built from {done.documents:,} documents",
                "refreshed": f"refreshed {done.threads:,} threads ({done.documents:,} documents)",
                "unchanged": "up to date with the marts",
            }[done.action]
            where = " (shared index)" if report["index"] == "shared" else ""
            print(f"{name}: {what}{where} in {done.seconds:.2f} s", file=out)
    if as_json:
        print(json.dumps({"indexes": reports}), file=out)
    elif not reports:
        print("nothing to index: no repository has documents (run dbt build first)", file=out)
    return ExitStatus.OK
