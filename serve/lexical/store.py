"""Where the indexes live, and how they are built, refreshed and read while refreshed.

Layout, under the index root (``$RELORE_INDEX_DIR``, default ``$RELORE_HOME/search-index``)::

    <database key>/<repo_id>/current.json   {"layout", "database_oid", "generation", "marks"}
    <database key>/<repo_id>/g<generation>/ tantivy's files: one document per live document
    <database key>/<repo_id>/g<generation>/threads/  one document per thread (its own words)
    <database key>/<repo_id>/.lock          one writer at a time, across processes

A full build writes a new generation directory and then replaces ``current.json`` (an atomic
rename), so a reader sees the old index or the new one, never half of one. A refresh writes
into the current generation through tantivy's own commit (new segments, then its meta file
atomically), then moves the marks. A reader whose reload fails (a segment merged away under
it) keeps the searcher it has: every page comes from a complete index.

The index is a cache of the marts: deleting the root loses nothing but the time to rebuild.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import tantivy
from psycopg.rows import dict_row

from relore.contract.places import relore_home
from relore.serve.errors import Unavailable
from relore.serve.lexical import results, schema, source

log = logging.getLogger("relore.index")

WRITER_HEAP = 128_000_000
BATCH = 2000
# threads read per slice of a build: their signals are held in memory meanwhile
THREAD_SLICE = 2000


def index_root(env=None) -> Path:
    env = os.environ if env is None else env
    if env.get("RELORE_INDEX_DIR"):
        return Path(env["RELORE_INDEX_DIR"]).expanduser().resolve()
    return relore_home(env) / "search-index"


def database_key(host: str | None, port: int | str | None, dbname: str) -> str:
    """A directory name per database server and database (a socket path or a host)."""
    digest = hashlib.sha256(f"{host}\0{port}\0{dbname}".encode()).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in dbname)[:40]
    return f"{safe}-{digest}"


@dataclass(frozen=True)
class Marks:
    """The newest ``written_at`` of each mart the index follows (``source.FOLLOWED``, in that
    order; ISO text, or None before anything was built)."""

    values: tuple[str | None, ...]

    @classmethod
    def of(cls, row: dict) -> Marks:
        return cls(tuple(row[k].isoformat() if row[k] else None for k in source.FOLLOWED))

    @classmethod
    def from_dict(cls, data: dict) -> Marks:
        return cls(tuple(data.get(k) for k in source.FOLLOWED))

    def as_dict(self) -> dict:
        return dict(zip(source.FOLLOWED, self.values, strict=True))


@dataclass(frozen=True)
class Current:
    """What ``current.json`` says: the generation readers open and what it was built to."""

    generation: int
    database_oid: int
    marks: Marks
    built_at: float
    refreshed_at: float

    @classmethod
    def read(cls, repo_dir: Path) -> Current | None:
        try:
            data = json.loads((repo_dir / "current.json").read_text())
        except (FileNotFoundError, ValueError):
            return None
        if data.get("layout") != schema.LAYOUT:
            return None
        return cls(
            data["generation"],
            data["database_oid"],
            Marks.from_dict(data["marks"]),
            data["built_at"],
            data["refreshed_at"],
        )

    def write(self, repo_dir: Path) -> None:
        data = {
            "layout": schema.LAYOUT,
            "generation": self.generation,
            "database_oid": self.database_oid,
            "marks": self.marks.as_dict(),
            "built_at": self.built_at,
            "refreshed_at": self.refreshed_at,
        }
        temporary = repo_dir / f"current.json.{os.getpid()}.{threading.get_ident()}"
        temporary.write_text(json.dumps(data))
        os.replace(temporary, repo_dir / "current.json")


def _open(path: Path) -> tantivy.Index:
    index = tantivy.Index(schema.SCHEMA, path=str(path), reuse=True)
    index.register_tokenizer(schema.TOKENIZER, schema.analyzer())
    return index


THREADS = "threads"


def _open_threads(generation: Path) -> tantivy.Index:
    """A generation's threads index (built and refreshed beside its documents)."""
    (generation / THREADS).mkdir(exist_ok=True)
    return _open(generation / THREADS)


@dataclass
class _Writers:
    documents: object
    threads: object

    @classmethod
    def of(cls, generation: Path) -> _Writers:
        return cls(
            _open(generation).writer(heap_size=WRITER_HEAP, num_threads=1),
            _open_threads(generation).writer(heap_size=WRITER_HEAP // 2, num_threads=1),
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


class _Lock:
    """One writer per repository index, across processes (flock on ``.lock``)."""

    def __init__(self, repo_dir: Path):
        repo_dir.mkdir(parents=True, exist_ok=True)
        self._file = open(repo_dir / ".lock", "a+")  # noqa: SIM115 - released in __exit__

    def __enter__(self):
        fcntl.flock(self._file, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()


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


def _add_rows(conn, writers: _Writers, repo_id: int, threads: list[int] | None, progress) -> int:
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
    with _Lock(repo_dir), psycopg.connect(conninfo, row_factory=dict_row) as conn:
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
            writers = _Writers.of(repo_dir / f"g{current.generation}")
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
        writers = _Writers.of(path)
        written = _add_rows(conn, writers, repo_id, None, progress)
        writers.commit()
        conn.rollback()
        now = time.time()
        Current(generation, oid, marks, now, now).write(repo_dir)
        _remove_old_generations(repo_dir, generation)
        return Refreshed(repo_id, "built", -1, written, time.perf_counter() - start, generation)


def _remove_old_generations(repo_dir: Path, keep: int) -> None:
    """Generations before the one just written. A process still reading one keeps its open
    files (unlinked files stay readable until closed)."""
    for child in repo_dir.iterdir():
        number = child.name[1:]
        if child.is_dir() and child.name[:1] == "g" and number.isdigit() and int(number) < keep:
            shutil.rmtree(child, ignore_errors=True)


class Reader:
    """The open index of one repository in this process, reloaded when ``current.json``
    moves; a reload that fails keeps the searcher it had."""

    def __init__(self, repo_dir: Path):
        self.repo_dir = repo_dir
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._index: tantivy.Index | None = None
        self._threads: tantivy.Index | None = None
        self._generation: int | None = None
        self.current: Current | None = None

    def _stat(self):
        try:
            st = (self.repo_dir / "current.json").stat()
        except OSError:  # missing, or a path that cannot hold it: nothing to read
            return None
        return (st.st_mtime_ns, st.st_ino, st.st_size)

    def searcher(self) -> tantivy.Searcher | None:
        with self._lock:
            stamp = self._stat()
            if stamp != self._stamp:
                self._reload(stamp)
            return self._index.searcher() if self._index is not None else None

    def thread_searcher(self) -> tantivy.Searcher | None:
        """The threads index of the generation ``searcher`` last opened (None before one)."""
        with self._lock:
            return self._threads.searcher() if self._threads is not None else None

    def _reload(self, stamp) -> None:
        current = Current.read(self.repo_dir)
        if current is None:
            return
        try:
            if current.generation != self._generation or self._index is None:
                generation = self.repo_dir / f"g{current.generation}"
                index, threads = _open(generation), _open_threads(generation)
            else:
                index, threads = self._index, self._threads
                index.reload()
                threads.reload()
        except (ValueError, OSError) as exc:  # a generation removed under us: keep ours
            log.warning("index reload failed, keeping the open one: %s", exc)
            return
        self._index, self._threads = index, threads
        self._generation, self.current = current.generation, current
        self._stamp = stamp


class Indexes:
    """Every repository index of one database, for one process: ``fresh`` answers a reader
    that is up to the marts, refreshing first when a build wrote since its marks (one
    refresh at a time per repository; concurrent requests wait for the same one)."""

    def __init__(self, root: Path, key: str, conninfo: str):
        self.root = root / key
        self.conninfo = conninfo
        # results already ranked, keyed on the marks they were read at (results.py)
        self.results = results.Results(results.entries_from_env())
        self._readers: dict[int, Reader] = {}
        self._refreshing: dict[int, asyncio.Lock] = {}

    def reader(self, repo_id: int) -> Reader:
        if repo_id not in self._readers:
            self._readers[repo_id] = Reader(self.root / str(repo_id))
        return self._readers[repo_id]

    async def _wanted(self, conn, repo_id: int) -> tuple[int, Marks]:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(source.MARKS, {"repo_id": repo_id})
            found = await cur.fetchone()
        return found["database_oid"], Marks.of(found)

    async def state(self, conn, repo_id: int) -> dict:
        """How fresh the index is, for ``status``: current, behind the marts, or not built."""
        reader = self.reader(repo_id)
        searcher = reader.searcher()
        current = reader.current
        if searcher is None or current is None:
            return {"state": "not built", "path": str(reader.repo_dir)}
        wanted = await self._wanted(conn, repo_id)
        behind = (current.database_oid, current.marks) != wanted
        return {
            "state": "behind" if behind else "current",
            "documents": searcher.num_docs,
            "generation": current.generation,
            "built_at": _iso_time(current.built_at),
            "refreshed_at": _iso_time(current.refreshed_at),
            "path": str(reader.repo_dir),
        }

    async def fresh(self, conn, repo_id: int, marks: dict | None = None) -> tantivy.Searcher:
        """``marks``: the row of ``source.MARKS`` when the caller already read it."""
        reader = self.reader(repo_id)
        if marks is None:
            wanted = await self._wanted(conn, repo_id)
        else:
            wanted = (marks["database_oid"], Marks.of(marks))

        def up_to_date(current: Current | None) -> bool:
            return current is not None and (current.database_oid, current.marks) == wanted

        searcher = reader.searcher()
        if searcher is not None and up_to_date(reader.current):
            return searcher
        lock = self._refreshing.setdefault(repo_id, asyncio.Lock())
        async with lock:
            searcher = reader.searcher()
            if searcher is None or not up_to_date(reader.current):
                try:
                    done = await asyncio.to_thread(refresh, self.conninfo, reader.repo_dir, repo_id)
                except OSError as exc:  # an unwritable or full disk: say where, and the fix
                    raise Unavailable(
                        f"the search index cannot be written at {reader.repo_dir} ({exc}); "
                        "point RELORE_INDEX_DIR at a writable directory"
                    ) from exc
                log.info(
                    "index %s %s: %d threads, %d documents in %.2fs",
                    repo_id, done.action, done.threads, done.documents, done.seconds,
                )  # fmt: skip
                searcher = reader.searcher()
        if searcher is None:
            raise RuntimeError(f"the search index of repository {repo_id} could not be opened")
        return searcher


def _iso_time(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")


_REGISTRY: dict[tuple, Indexes] = {}


def for_connection_url(url: str, root: Path | None = None) -> Indexes:
    """The indexes of the database at ``url`` (connects once to learn who it is)."""
    with psycopg.connect(url) as conn:
        return for_connection(conn, root)


def for_connection(conn, root: Path | None = None) -> Indexes:
    """The indexes of the database ``conn`` is connected to (one registry per process)."""
    info = conn.info
    root = root or index_root()
    key = (str(root), info.host, info.port, info.dbname)
    if key not in _REGISTRY:
        conninfo = psycopg.conninfo.make_conninfo(info.dsn, password=info.password or None)
        _REGISTRY[key] = Indexes(root, database_key(info.host, info.port, info.dbname), conninfo)
    return _REGISTRY[key]
