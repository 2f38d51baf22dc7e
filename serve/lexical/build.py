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
    SHARED,
    Current,
    Lock,
    Marks,
    Member,
    SharedCurrent,
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

    def delete_threads(self, threads: list[int], slot: int = 0) -> None:
        keys = [schema.thread_key(slot, t) for t in threads]
        for start_at in range(0, len(keys), 10_000):
            chunk = keys[start_at : start_at + 10_000]
            for writer in (self.documents, self.threads):
                writer.delete_documents_by_query(
                    tantivy.Query.term_set_query(schema.SCHEMA, schema.THREAD, chunk)
                )

    def delete_member(self, slot: int) -> None:
        """Every document of the shared index's member at ``slot``."""
        member = tantivy.Query.term_query(schema.SCHEMA, schema.MEMBER, slot)
        for writer in (self.documents, self.threads):
            writer.delete_documents_by_query(member)

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
    # written into the shared index (a member), not an index of its own
    shared: bool = False


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


def _add_rows(
    conn, writers: Writers, repo_id: int, threads: list[int] | None, progress, slot: int = 0
) -> int:
    """Every live document of ``threads`` (None: of every thread), and each thread as one
    document of the threads index, read a slice of threads at a time so only one slice's
    signals and words are held in memory; ``slot``: the repository's in the shared index."""
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
                    writers.documents.add_document(schema.document(row, signals.get(thread), slot))
                    said = row["thread_lexemes"] or row["lexemes"]
                    if row["trust_tier"] in schema.THREAD_TIERS and said:
                        words.setdefault(thread, []).append(said)
                        states[thread] = schema.thread_states(row["github_state"], row["is_merged"])
                written += len(rows)
                if progress:
                    progress(written)
        for thread, held in words.items():
            writers.threads.add_document(
                schema.thread_document(thread, held, states[thread], signals.get(thread), slot)
            )
    return written


def _changed(meta, repo_id: int, marks: Marks) -> list[int]:
    """The threads of ``repo_id`` written since ``marks``."""
    since = {"repo_id": repo_id, **{k: v or "-infinity" for k, v in marks.as_dict().items()}}
    return meta.execute(source.CHANGED_THREADS, since).fetchone()["threads"]


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
            threads = _changed(meta, repo_id, current.marks)
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


def refresh_shared(
    conninfo: str,
    root: Path,
    repo_ids: list[int],
    limit: int,
    *,
    full: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict[int, Refreshed | None]:
    """Bring each repository of ``repo_ids`` that belongs in the shared index (``root`` is
    the database's directory) up to the marts, in one commit: a member's threads written
    since its marks re-read; a repository never indexed joins when it has at most ``limit``
    live documents. ``full``: the shared index written anew, every member in slot order
    and each placed again (one grown past the limit leaves for an index of its own), as a
    repository's own index is rebuilt: a new generation, nothing deleted left in it. None
    for a repository that has an index of its own, or is given one now (its directory made,
    under this lock, so every process places it alike): ``refresh`` builds it.
    ``progress(repo_id, documents)``."""
    shared_dir = root / SHARED
    done: dict[int, Refreshed | None] = {}
    with Lock(shared_dir), psycopg.connect(conninfo, row_factory=dict_row) as conn:
        conn.execute("begin isolation level repeatable read read only")
        meta = conn.cursor()
        oid = meta.execute(source.DATABASE_OID).fetchone()["database_oid"]
        current = SharedCurrent.read(shared_dir)
        wanted = list(repo_ids)
        if full or current is None or current.database_oid != oid:  # a new generation
            kept = current.members if current and current.database_oid == oid and full else {}
            ordered = sorted(kept, key=lambda r: kept[r].slot)
            wanted = ordered + [r for r in repo_ids if r not in kept]
            generation = (current.generation + 1) if current else 1
            shutil.rmtree(shared_dir / f"g{generation}", ignore_errors=True)
            (shared_dir / f"g{generation}").mkdir(parents=True)
            now = time.time()
            current = SharedCurrent(generation, oid, {}, now, now)
            # written and flipped to even with no member in it (every one left)
            writers = Writers.of(shared_dir / f"g{generation}")
        else:
            writers = None
        members = dict(current.members)
        for repo_id in wanted:
            start = time.perf_counter()
            member = members.get(repo_id)
            own = root / str(repo_id)
            if member is None and (own.exists() or _documents(meta, repo_id, limit) > limit):
                own.mkdir(parents=True, exist_ok=True)
                done[repo_id] = None
                continue
            found = meta.execute(source.MARKS, {"repo_id": repo_id}).fetchone()
            marks = Marks.of(found)
            if member is not None and member.marks == marks:
                done[repo_id] = Refreshed(
                    repo_id, "unchanged", 0, 0, 0.0, current.generation, shared=True
                )
                continue
            writers = writers or Writers.of(shared_dir / f"g{current.generation}")
            if member is None:
                slot = max((m.slot for m in members.values()), default=0) + 1
                writers.delete_member(slot)
                threads, action = None, "built"
            else:
                slot = member.slot
                threads, action = _changed(meta, repo_id, member.marks), "refreshed"
                writers.delete_threads(threads, slot)
            written = _add_rows(
                conn,
                writers,
                repo_id,
                threads,
                (lambda n, r=repo_id: progress(r, n)) if progress else None,
                slot,
            )
            members[repo_id] = Member(slot, marks)
            done[repo_id] = Refreshed(
                repo_id,
                action,
                -1 if threads is None else len(threads),
                written,
                time.perf_counter() - start,
                current.generation,
                shared=True,
            )
        if writers is not None:
            writers.commit()
        conn.rollback()
        if writers is not None or not (shared_dir / "current.json").exists():
            now = time.time()
            SharedCurrent(current.generation, oid, members, current.built_at, now).write(shared_dir)
            remove_old_generations(shared_dir, current.generation)
    return {r: done.get(r) for r in repo_ids}


def _documents(meta, repo_id: int, limit: int) -> int:
    """The repository's live documents, counted up to ``limit`` + 1 (enough to decide)."""
    return meta.execute(source.LIVE_DOCUMENTS, {"repo_id": repo_id, "limit": limit + 1}).fetchone()[
        "documents"
    ]
