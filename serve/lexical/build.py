"""How an index is built and refreshed from the marts: every live document of a repository, and
each thread as one document of the threads index, read a slice of threads at a time.

A refresh writes into the current generation through tantivy's own commit (new segments,
then its meta file atomically), then moves the marks; a build writes a new generation and
flips ``current.json`` (``generations.py``).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
import tantivy
from psycopg.rows import dict_row

from relore.serve.lexical import schema, source
from relore.serve.lexical.generations import (
    Current,
    Lock,
    Marks,
    open_index,
    open_threads,
    remove_old_generations,
)

WRITER_HEAP = 128_000_000
BATCH = 2000
# threads read per slice of a build: their signals are held in memory meanwhile
THREAD_SLICE = 2000


@dataclass
class Writers:
    documents: object
    threads: object

    @classmethod
    def of(cls, generation: Path) -> Writers:
        return cls(
            open_index(generation).writer(heap_size=WRITER_HEAP, num_threads=1),
            open_threads(generation).writer(heap_size=WRITER_HEAP // 2, num_threads=1),
        )

    def delete_threads(self, threads: list[int]) -> None:
        for start_at in range(0, len(threads), 10_000):
            chunk = threads[start_at : start_at + 10_000]
            for writer in (self.documents, self.threads):
                writer.delete_documents_by_query(
                    tantivy.Query.term_set_query(schema.SCHEMA, schema.THREAD, chunk)
                )

    def commit(self) -> None:
        for writer in (self.documents, self.threads):
            writer.commit()
            writer.wait_merging_threads()


@dataclass(frozen=True)
class Refreshed:
    repo_id: int
    action: str  # "built", "refreshed", "unchanged"
    threads: int  # threads re-read (every thread on a build)
    documents: int  # documents written
    seconds: float
    generation: int


def _signals(conn, repo_id: int, threads: list[int]) -> dict[int, dict[str, set[str]]]:
    """Each thread's signals as index terms (schema.signal_terms), read once per pass."""
    found: dict[int, dict[str, set[str]]] = {}
    with conn.cursor(name="relore_index_signals") as cur:
        cur.itersize = 20_000
        cur.execute(source.SIGNALS, {"repo_id": repo_id, "threads": threads})
        for row in cur:
            value = row["value"]
            if not value or len(value.encode()) > schema.MAX_TERM_BYTES:
                continue
            fields = found.setdefault(row["thread_number"], {})
            for name, term in schema.signal_terms(row["kind"], value):
                fields.setdefault(name, set()).add(term)
    return found


def _add_rows(conn, writers: Writers, repo_id: int, threads: list[int] | None, progress) -> int:
    """Every live document of ``threads`` (None: of every thread), and each thread as one
    document of the threads index, read a slice of threads at a time so only one slice's
    signals and words are held in memory."""
    if threads is None:
        found = conn.execute(source.ALL_THREADS, {"repo_id": repo_id}).fetchone()
        threads = found["threads"]
    written = 0
    for start in range(0, len(threads), THREAD_SLICE):
        part = threads[start : start + THREAD_SLICE]
        signals = _signals(conn, repo_id, part)
        words: dict[int, list[str]] = {}
        states: dict[int, list[str]] = {}
        with conn.cursor(name="relore_index_rows") as cur:
            cur.execute(source.ROWS, {"repo_id": repo_id, "threads": part})
            while rows := cur.fetchmany(BATCH):
                for row in rows:
                    thread = row["thread_number"]
                    writers.documents.add_document(schema.document(row, signals.get(thread)))
                    said = row["thread_lexemes"] or row["lexemes"]
                    if row["trust_tier"] in schema.THREAD_TIERS and said:
                        words.setdefault(thread, []).append(said)
                        states[thread] = schema.thread_states(row["github_state"], row["is_merged"])
                written += len(rows)
                if progress:
                    progress(written)
        for thread, held in words.items():
            writers.threads.add_document(
                schema.thread_document(thread, held, states[thread], signals.get(thread))
            )
    return written


def refresh(
    conninfo: str,
    repo_dir: Path,
    repo_id: int,
    *,
    full: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Refreshed:
    """Bring one repository's index up to the marts: build it (first time, another
    database, another layout, or ``full``) or re-read the threads written since its marks."""
    start = time.perf_counter()
    with Lock(repo_dir), psycopg.connect(conninfo, row_factory=dict_row) as conn:
        # one snapshot: the marks and the rows they cover agree
        conn.execute("begin isolation level repeatable read read only")
        meta = conn.cursor()
        found = meta.execute(source.MARKS, {"repo_id": repo_id}).fetchone()
        oid, marks = found["database_oid"], Marks.of(found)
        current = Current.read(repo_dir)
        if current and current.database_oid == oid and not full:
            if current.marks == marks:
                conn.rollback()
                return Refreshed(repo_id, "unchanged", 0, 0, 0.0, current.generation)
            since = {
                "repo_id": repo_id,
                **{k: v or "-infinity" for k, v in current.marks.as_dict().items()},
            }
            threads = meta.execute(source.CHANGED_THREADS, since).fetchone()["threads"]
            writers = Writers.of(repo_dir / f"g{current.generation}")
            writers.delete_threads(threads)
            written = _add_rows(conn, writers, repo_id, threads, progress)
            writers.commit()
            conn.rollback()
            now = time.time()
            Current(current.generation, oid, marks, current.built_at, now).write(repo_dir)
            return Refreshed(
                repo_id,
                "refreshed",
                len(threads),
                written,
                time.perf_counter() - start,
                current.generation,
            )
        generation = (current.generation + 1) if current else 1
        path = repo_dir / f"g{generation}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        writers = Writers.of(path)
        written = _add_rows(conn, writers, repo_id, None, progress)
        writers.commit()
        conn.rollback()
        now = time.time()
        Current(generation, oid, marks, now, now).write(repo_dir)
        remove_old_generations(repo_dir, generation)
        return Refreshed(repo_id, "built", -1, written, time.perf_counter() - start, generation)
