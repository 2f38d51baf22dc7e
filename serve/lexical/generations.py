"""Where the indexes live: their layout on disk, the marks a generation was built to, and the
one writer's lock.

Layout, under the index root (``$RELORE_INDEX_DIR``, default ``$RELORE_HOME/search-index``)::

    <database key>/<repo_id>/current.json   {"layout", "database_oid", "generation", "marks"}
    <database key>/<repo_id>/g<generation>/ tantivy's files: one document per live document
    <database key>/<repo_id>/g<generation>/threads/  one document per thread (its own words)
    <database key>/<repo_id>/.lock          one writer at a time, across processes
    <database key>/shared/current.json      the shared index: {"layout", "database_oid",
                                            "generation", "members": {repo_id: {"slot",
                                            "marks"}}}, its generations and lock as above

Small repositories (at most ``shared_limit`` live documents when first indexed) are members
of the shared index instead of having one each: a search across a hundred of them walks one
index, not a hundred (``shared.py``; benchmarks/results/across-repositories.md). A
repository's place is decided once, when its index is first built, and kept: its own
directory, or its entry in ``members``.

A full build writes a new generation directory and then replaces ``current.json`` (an atomic
rename), so a reader sees the old index or the new one, never half of one (``build.py``
writes, ``store.py`` reads). The index is a cache of the marts: deleting the root loses
nothing but the time to rebuild.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import tantivy

from relore.contract.places import relore_home
from relore.serve.lexical import schema, source


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


def _read_current(directory: Path) -> dict | None:
    """``current.json`` of an index directory (None: missing, unreadable, another layout)."""
    try:
        data = json.loads((directory / "current.json").read_text())
    except (FileNotFoundError, ValueError):
        return None
    return data if data.get("layout") == schema.LAYOUT else None


def _write_current(directory: Path, data: dict) -> None:
    """``current.json`` replaced whole (a rename): a reader sees the old one or the new."""
    temporary = directory / f"current.json.{os.getpid()}.{threading.get_ident()}"
    temporary.write_text(json.dumps({"layout": schema.LAYOUT, **data}))
    os.replace(temporary, directory / "current.json")


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
        data = _read_current(repo_dir)
        if data is None:
            return None
        return cls(
            data["generation"],
            data["database_oid"],
            Marks.from_dict(data["marks"]),
            data["built_at"],
            data["refreshed_at"],
        )

    def write(self, repo_dir: Path) -> None:
        _write_current(
            repo_dir,
            {
                "generation": self.generation,
                "database_oid": self.database_oid,
                "marks": self.marks.as_dict(),
                "built_at": self.built_at,
                "refreshed_at": self.refreshed_at,
            },
        )


def open_index(path: Path) -> tantivy.Index:
    index = tantivy.Index(schema.SCHEMA, path=str(path), reuse=True)
    index.register_tokenizer(schema.TOKENIZER, schema.analyzer())
    return index


THREADS = "threads"


def open_threads(generation: Path) -> tantivy.Index:
    """A generation's threads index (built and refreshed beside its documents)."""
    (generation / THREADS).mkdir(exist_ok=True)
    return open_index(generation / THREADS)


SHARED = "shared"
# the most live documents a repository has, when first indexed, to be a member of the shared
# index (RELORE_SHARED_INDEX_DOCUMENTS; 0: every repository has its own)
SHARED_LIMIT = 50_000


def shared_limit(env=None) -> int:
    env = os.environ if env is None else env
    raw = env.get("RELORE_SHARED_INDEX_DOCUMENTS", "").strip()
    if not raw:
        return SHARED_LIMIT
    try:
        limit = int(raw)
    except ValueError:
        limit = -1
    if limit < 0:
        raise ValueError(
            f"RELORE_SHARED_INDEX_DOCUMENTS={raw!r}: a count of documents (0 turns sharing off)"
        )
    return limit


@dataclass(frozen=True)
class Member:
    slot: int
    marks: Marks


@dataclass(frozen=True)
class SharedCurrent:
    """What the shared index's ``current.json`` says: its generation, and each member's slot
    and the marks its documents were written to."""

    generation: int
    database_oid: int
    members: dict[int, Member]
    built_at: float
    refreshed_at: float

    @classmethod
    def read(cls, shared_dir: Path) -> SharedCurrent | None:
        data = _read_current(shared_dir)
        if data is None:
            return None
        members = {
            int(repo_id): Member(m["slot"], Marks.from_dict(m["marks"]))
            for repo_id, m in data["members"].items()
        }
        return cls(
            data["generation"], data["database_oid"], members, data["built_at"],
            data["refreshed_at"],
        )  # fmt: skip

    def write(self, shared_dir: Path) -> None:
        members = {
            str(repo_id): {"slot": m.slot, "marks": m.marks.as_dict()}
            for repo_id, m in sorted(self.members.items())
        }
        _write_current(
            shared_dir,
            {
                "generation": self.generation,
                "database_oid": self.database_oid,
                "members": members,
                "built_at": self.built_at,
                "refreshed_at": self.refreshed_at,
            },
        )


class Lock:
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


def remove_old_generations(repo_dir: Path, keep: int) -> None:
    """Generations before the one just written. A process still reading one keeps its open
    files (unlinked files stay readable until closed)."""
    for child in repo_dir.iterdir():
        number = child.name[1:]
        if child.is_dir() and child.name[:1] == "g" and number.isdigit() and int(number) < keep:
            shutil.rmtree(child, ignore_errors=True)
