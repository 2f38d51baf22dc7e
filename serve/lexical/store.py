"""The indexes a process reads: a repository's own, or its view of the shared index
(``shared.py``), each reloaded when a build or refresh moves ``current.json`` and refreshed
first when the marts were written since its marks.

A reader whose reload fails (a segment merged away under it) keeps the searcher it has:
every page comes from a complete index. Layout on disk: ``generations.py``; writing:
``build.py``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import tantivy
from psycopg.rows import dict_row

from relore.serve.errors import Unavailable
from relore.serve.lexical import build, results, source
from relore.serve.lexical.generations import (
    SHARED,
    Current,
    Marks,
    SharedCurrent,
    database_key,
    index_root,
    open_index,
    open_threads,
    shared_limit,
)
from relore.serve.lexical.shared import View

log = logging.getLogger("relore.index")


class Reader:
    """The open index of one repository (or the shared index: ``kind`` SharedCurrent) in this
    process, reloaded when ``current.json`` moves; a reload that fails keeps the searcher it
    had."""

    def __init__(self, repo_dir: Path, kind=Current):
        self.repo_dir = repo_dir
        self._kind = kind
        self._lock = threading.Lock()
        self._stamp: tuple | None = None
        self._index: tantivy.Index | None = None
        self._threads: tantivy.Index | None = None
        self._generation: int | None = None
        # the searchers of the last reload (documents, threads): a searcher is a snapshot
        # that many requests and threads read at once; opening one costs ~0.4 ms
        self._searchers: tuple | None = None
        self.current = None  # a Current (SharedCurrent for the shared index)

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
            return self._searchers[0] if self._searchers else None

    def thread_searcher(self) -> tantivy.Searcher | None:
        """The threads index of the generation ``searcher`` last opened (None before one)."""
        with self._lock:
            return self._searchers[1] if self._searchers else None

    def _reload(self, stamp) -> None:
        current = self._kind.read(self.repo_dir)
        if current is None:
            return
        try:
            if current.generation != self._generation or self._index is None:
                generation = self.repo_dir / f"g{current.generation}"
                index, threads = open_index(generation), open_threads(generation)
            else:
                index, threads = self._index, self._threads
                index.reload()
                threads.reload()
            searchers = (index.searcher(), threads.searcher())
        except (ValueError, OSError) as exc:  # a generation removed under us: keep ours
            log.warning("index reload failed, keeping the open one: %s", exc)
            return
        self._index, self._threads, self._searchers = index, threads, searchers
        self._generation, self.current = current.generation, current
        self._stamp = stamp


class MemberReader:
    """Members' reader of the shared index (one repository's, or several searched together):
    its searchers are views held to them, and for one member its ``current`` is the shared
    generation at the member's marks (None: not a member)."""

    def __init__(self, shared: Reader, repo_ids: tuple[int, ...]):
        self.shared = shared
        self.repo_ids = repo_ids
        self.repo_dir = shared.repo_dir

    def view(self, searcher) -> View | None:
        """``searcher`` (the shared index's, as last opened) held to these members (None:
        one of them is not a member of the generation last opened)."""
        current = self.shared.current
        if searcher is None or current is None:
            return None
        slots = tuple(current.members[r].slot for r in self.repo_ids if r in current.members)
        if len(slots) < len(self.repo_ids):
            return None
        return View(searcher, slots, every=len(slots) == len(current.members))

    def searcher(self) -> View | None:
        return self.view(self.shared.searcher())

    def thread_searcher(self) -> View | None:
        return self.view(self.shared.thread_searcher())

    def repositories(self) -> dict[int, int]:
        """Each member's slot -> its repository (of the generation last opened)."""
        current = self.shared.current
        return {current.members[r].slot: r for r in self.repo_ids} if current else {}

    @property
    def current(self) -> Current | None:
        current = self.shared.current
        member = current.members.get(self.repo_ids[0]) if current else None
        if member is None or len(self.repo_ids) != 1:
            return None
        return Current(
            current.generation,
            current.database_oid,
            member.marks,
            current.built_at,
            current.refreshed_at,
        )


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
        self._members: dict[int, MemberReader] = {}
        self._refreshing: dict[int | str, asyncio.Lock] = {}
        self.shared = Reader(self.root / SHARED, SharedCurrent)
        self.shared_limit = shared_limit()

    def reader(self, repo_id: int) -> Reader | MemberReader:
        """The repository's reader: of its own index, or of its place in the shared one (a
        repository not indexed yet: where it will be, when sharing is on). A member the
        shared index last read holds is answered without looking at the disk."""
        if repo_id in self._readers:
            return self._readers[repo_id]
        current = self.shared.current
        if current is None or repo_id not in current.members:
            own = self.root / str(repo_id)
            if own.exists() or not self.shared_limit:
                self._readers[repo_id] = Reader(own)
                return self._readers[repo_id]
        if repo_id not in self._members:
            self._members[repo_id] = MemberReader(self.shared, (repo_id,))
        return self._members[repo_id]

    def refresh(self, repo_id: int, *, full: bool = False, progress=None) -> build.Refreshed:
        """Bring the repository's index up to the marts now (blocking): its own, or its
        place in the shared index (decided there, the first time)."""
        return self.refresh_many([repo_id], full=full, progress=progress)[repo_id]

    def refresh_many(
        self, repo_ids: list[int], *, full: bool = False, progress=None, limit: int | None = None
    ) -> dict[int, build.Refreshed]:
        """Each repository's index up to the marts (blocking): the shared index's members in
        one commit, then each repository's own. ``progress(repo_id, documents)``; ``limit``:
        the shared index's (``relored index`` reads its own environment's)."""
        limit = self.shared_limit if limit is None else limit
        done: dict[int, build.Refreshed | None] = {}
        sharing = [r for r in repo_ids if not (self.root / str(r)).exists()]
        if sharing and limit:
            self.root.mkdir(parents=True, exist_ok=True)
            done = build.refresh_shared(
                self.conninfo, self.root, sharing, limit, full=full, progress=progress
            )
        for repo_id in repo_ids:
            if done.get(repo_id) is None:
                done[repo_id] = build.refresh(
                    self.conninfo,
                    self.root / str(repo_id),
                    repo_id,
                    full=full,
                    progress=(lambda n, r=repo_id: progress(r, n)) if progress else None,
                )
        return done

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
        shared = isinstance(searcher, View)
        return {
            "state": "behind" if behind else "current",
            **({"shared": True} if shared else {}),
            "documents": searcher.count_held() if shared else searcher.num_docs,
            "generation": current.generation,
            "built_at": _iso_time(current.built_at),
            "refreshed_at": _iso_time(current.refreshed_at),
            "path": str(reader.repo_dir),
        }

    async def refresh_each(self, repo_ids: list[int], where: Path) -> None:
        """``refresh_many`` in a worker thread; a disk that cannot be written is Unavailable."""
        try:
            done = await asyncio.to_thread(self.refresh_many, repo_ids)
        except OSError as exc:  # an unwritable or full disk: say where, and the fix
            raise Unavailable(
                f"the search index cannot be written at {where} ({exc}); "
                "point RELORE_INDEX_DIR at a writable directory"
            ) from exc
        for each in done.values():
            log.info(
                "index %s %s: %d threads, %d documents in %.2fs",
                each.repo_id, each.action, each.threads, each.documents, each.seconds,
            )  # fmt: skip

    async def fresh_each(
        self, conn, rows: dict[int, dict], marks: dict[int, Marks]
    ) -> dict[int, object]:
        """Each repository's searcher, up to the marts (``rows``: each one's
        ``source.MARKS`` row; ``marks``: its marks as ``Marks``): the shared index looked at
        once for all its members, those behind (or not placed yet) refreshed in one commit,
        not one each; an index of its own as ``fresh`` gives it."""
        base = self.shared.searcher()
        found: dict[int, object] = {}
        behind = []
        for repo_id, row in rows.items():
            reader = self.reader(repo_id)
            if not isinstance(reader, MemberReader):
                continue
            current, view = reader.current, reader.view(base)
            if view is None or (current.database_oid, current.marks) != (
                row["database_oid"],
                marks[repo_id],
            ):
                behind.append(repo_id)
                continue
            found[repo_id] = view
        if len(behind) > 1:
            async with self._refreshing.setdefault(SHARED, asyncio.Lock()):
                await self.refresh_each(behind, self.shared.repo_dir)
        for repo_id, row in rows.items():
            if repo_id not in found:
                found[repo_id] = await self.fresh(conn, repo_id, row)
        return found

    async def fresh(self, conn, repo_id: int, marks: dict | None = None) -> tantivy.Searcher | View:
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
            reader = self.reader(repo_id)
            searcher = reader.searcher()
            if searcher is None or not up_to_date(reader.current):
                await self.refresh_each([repo_id], reader.repo_dir)
                reader = self.reader(repo_id)
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
