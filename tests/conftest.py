"""Session fixtures: a throwaway embedded Postgres cluster, fresh databases, dbt, fake GitHub,
and the indexed world every read-only suite shares (tests/fixtures/world.py).

Nothing here skips: a machine that cannot start the embedded Postgres fails the suite.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import itertools
import os
import pickle
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from fixtures import world as worlds
from psycopg import conninfo, sql

from relore.operate import database

REPO_ROOT = Path(__file__).resolve().parent.parent
_db_names = itertools.count(1)


@pytest.fixture(scope="session", autouse=True)
def _private_pgpass(tmp_path_factory):
    """libpq's password file for this session: `relored db start` writes the writer's entry
    there, never into the real ~/.pgpass."""
    passfile = tmp_path_factory.mktemp("pgpass") / "pgpass"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PGPASSFILE", str(passfile))
        yield passfile


@pytest.fixture(scope="session", autouse=True)
def _private_search_index(tmp_path_factory):
    """The search indexes this session's daemons and searches build (serve/lexical): under
    the session's temporary directory, never in the working tree's .relore."""
    root = tmp_path_factory.mktemp("search-index")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RELORE_INDEX_DIR", str(root))
        yield root


def _background_modules(items) -> dict:
    """The collected modules that start work in the background (``start_in_background``),
    each with its items."""
    found: dict = {}
    for item in items:
        module = getattr(item, "module", None)
        if hasattr(module, "start_in_background"):
            found.setdefault(module, []).append(item)
    return found


def pytest_collection_modifyitems(session, config, items):
    """A module whose runs start in the background at session start runs last: its tests
    wait for those runs, which went on beside every other module's tests."""
    background = {item for found in _background_modules(items).values() for item in found}
    items[:] = [i for i in items if i not in background] + [i for i in items if i in background]


@pytest.fixture(scope="session", autouse=True)
def _background(request, tmp_path_factory, _private_pgpass, _private_search_index):
    """Start every background module's runs (benchmark scripts, the demo, the quality gate:
    child processes) when the session starts, in the environment it started with, on
    ``RELORE_TEST_BACKGROUND`` runners (default 1: the suite itself keeps the other core
    busy), at nice 10."""
    found = _background_modules(request.session.items)
    if not found:
        yield
        return
    env, workers = dict(os.environ), int(os.environ.get("RELORE_TEST_BACKGROUND", "1"))
    # niced (Linux: per thread, inherited by the children it starts): the runs take the CPU
    # the suite leaves, and a test timing its daemon's event loop is not starved by them
    pool = ThreadPoolExecutor(
        max(1, workers), thread_name_prefix="background", initializer=os.nice, initargs=(10,)
    )
    try:
        # the module whose runs take longest started first (BACKGROUND_SECONDS)
        for module in sorted(found, key=lambda m: -getattr(m, "BACKGROUND_SECONDS", 0)):
            module.start_in_background(pool, found[module], tmp_path_factory.mktemp, env)
        yield
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def pg_cluster(tmp_path_factory) -> database.EmbeddedPaths:
    """The session's embedded cluster: ``pg_cluster.url(...)`` is the superuser's URL (with
    its password), ``pg_cluster.writer_url(...)`` the writer's."""
    paths = database.EmbeddedPaths(tmp_path_factory.mktemp("pg"))
    database.start_embedded(paths)
    yield paths
    database.stop_embedded(paths)


def _drop_database(paths: database.EmbeddedPaths, name: str) -> None:
    with psycopg.connect(paths.url(database="postgres"), autocommit=True) as conn:
        conn.execute(
            sql.SQL("drop database if exists {} with (force)").format(sql.Identifier(name))
        )


def _create_database(paths: database.EmbeddedPaths, name: str) -> str:
    _drop_database(paths, name)
    return database.ensure_embedded_database(paths, name)


@pytest.fixture(scope="session")
def _migrated(pg_cluster) -> str:
    """A database migrated once a session, the template of every ``db_url``."""
    return database.ensure_embedded_database(pg_cluster, f"t_{os.getpid()}_migrated")


@pytest.fixture
def db_url(pg_cluster, _migrated) -> str:
    """A new, migrated database for one test; the writer's URL (relore_writer, not a
    superuser, with its password). A copy of a database migrated once (``CREATE DATABASE …
    TEMPLATE``: files copied, no migration replayed), then made as ``relored db start`` makes
    one (``ensure_embedded_database``: owner, grants and revokes on the database, which a
    template does not pass on; the migrations find nothing to do). Dropped after the test: a
    session that kept every test's database left a gigabyte of files behind, which pytest's
    basetemp cleanup then spent half a minute deleting at the end of a later session."""
    name = f"t_{os.getpid()}_{next(_db_names)}"
    worlds.clone_database(pg_cluster, conninfo.conninfo_to_dict(_migrated)["dbname"], name)
    yield database.ensure_embedded_database(pg_cluster, name)
    _drop_database(pg_cluster, name)


class _ModuleDatabase:
    """The one private database a module may take (``module_db_url`` or ``world_copy``).
    Every module's is called the same, so dbt's saved parse for that name serves the next
    module's first build (see ``run_dbt``); it is dropped when the module ends."""

    def __init__(self, paths: database.EmbeddedPaths) -> None:
        self.paths, self.name, self.taken_by = paths, f"m_{os.getpid()}", None

    def take(self, by: str) -> str:
        if self.taken_by is not None:
            raise RuntimeError(f"a module takes one private database: {self.taken_by} or {by}")
        self.taken_by = by
        return self.name


@pytest.fixture(scope="module")
def _module_database(pg_cluster):
    slot = _ModuleDatabase(pg_cluster)
    yield slot
    _drop_database(pg_cluster, slot.name)


@pytest.fixture(scope="module")
def module_db_url(_module_database) -> str:
    """A new, migrated, empty database shared by one test module."""
    return _create_database(_module_database.paths, _module_database.take("module_db_url"))


@pytest.fixture(scope="session")
def indexed_world(request, pg_cluster, tmp_path_factory, run_dbt) -> worlds.World:
    """The world every read-only suite shares: each collected module's ``WORLD_PART``
    landed (a generated corpus through its fake GitHub and ``relored extract``), then one
    ``dbt build``. Read it; never change it (take ``world_copy`` for that)."""
    modules = {item.module for item in request.session.items if hasattr(item, "module")}
    parts = worlds.declared(modules)
    if not parts:
        raise RuntimeError("indexed_world: no collected module declares a WORLD_PART")
    with contextlib.ExitStack() as stack:
        yield worlds.build(
            pg_cluster,
            f"world_{os.getpid()}",
            parts,
            create_database=lambda name: _create_database(pg_cluster, name),
            run_dbt=run_dbt,
            mktemp=tmp_path_factory.mktemp,
            stack=stack,
        )


@pytest.fixture(scope="module")
def world_copy(indexed_world, _module_database) -> str:
    """A private copy of the world as it was built, for one module whose tests change it
    (an extract, a deletion, a build after new rows); the writer's URL."""
    name = _module_database.take("world_copy")
    return worlds.copy(_module_database.paths, indexed_world, name)


@pytest.fixture(scope="session")
def run_dbt(tmp_path_factory):
    """``run_dbt(url, tmp_path, *args)``: the repo's dbt project, run as a user runs it."""
    return _DbtRunner(tmp_path_factory.mktemp("dbt-parse"))


class _DbtRunner:
    """Plain ``dbt`` against ``url``, its target and logs under ``tmp_path``: the command line
    a user types, run by dbt's own ``dbtRunner`` in this process (a ``dbt`` child paid ~2 s of
    interpreter and imports per call, about 60 calls a session).

    The project is parsed once a session (``dbt parse``, a full parse: 10 s quiet, 45 s under
    load) and every call is given that manifest (``dbtRunner(manifest=...)``), as dbt's docs
    offer for repeated invocations: dbt then reads no project file, no saved parse, and checks
    nothing against them. That holds because nothing changes what dbt parses during a session:
    no test writes the project's files, and the ``--vars`` tests pass are read in SQL bodies
    (compiled at each call, with that call's vars), never in a ``config()`` or the project's
    configs, which are fixed at parse. What differs between calls is the database: dbt writes
    its name into each node (``database``, ``relation_name``: ``"db"."schema"."name"``), so each
    call gets a fresh copy of the parse (unpickled: dbt marks nodes compiled and their
    ephemeral CTEs injected, state a second call must not inherit) with the URL's database
    put in. dbt keeps global state (flags, adapters, its event logger) and is not safe to run
    twice at once in one process: calls are serialised, and each sees the environment a child
    had.
    """

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.lock = threading.Lock()
        self.parsed: bytes | None = None  # the pickled manifest of the one parse

    def __call__(self, url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
        with self.lock:
            if self.parsed is None:
                self.parsed = _freeze(_parse(url, self.scratch))
            manifest = _thaw(self.parsed)
            _retarget(manifest, conninfo.conninfo_to_dict(url)["dbname"])
            return _run_dbt(url, tmp_path, *args, manifest=manifest)


def _parse(url: str, scratch: Path):
    """The project as ``dbt parse`` reads it against ``url``'s profile: the Manifest."""
    done = _run_dbt(url, scratch, "parse")
    return done.manifest


def _freeze(manifest) -> bytes:
    """The manifest's contents pickled: its public fields (dbt's own ``__reduce_ex__`` passes
    them to the constructor one place out of order; the private lookups rebuild lazily)."""
    fields = [f.name for f in dataclasses.fields(manifest) if f.init and f.name[0] != "_"]
    return pickle.dumps({name: getattr(manifest, name) for name in fields}, protocol=5)


def _thaw(frozen: bytes):
    from dbt.contracts.graph.manifest import Manifest

    return Manifest(**pickle.loads(frozen))


def _retarget(manifest, database: str) -> None:
    """Put ``database`` where the parse wrote its own database's name: each node's and
    source's ``database`` and the ``"db".`` that starts its ``relation_name`` (also in the
    flat graph macros read as ``graph``)."""
    entries = [*manifest.nodes.values(), *manifest.sources.values()]
    flat = manifest.flat_graph or {}
    entries += [*flat.get("nodes", {}).values(), *flat.get("sources", {}).values()]
    for entry in entries:
        get = entry.get if isinstance(entry, dict) else lambda key, e=entry: getattr(e, key)
        old, relation = get("database"), get("relation_name")
        if not old or old == database:
            continue
        values = {"database": database}
        if relation and relation.startswith(f'"{old}".'):
            values["relation_name"] = f'"{database}"' + relation[len(old) + 2 :]
        for key, value in values.items():
            if isinstance(entry, dict):
                entry[key] = value
            else:
                setattr(entry, key, value)


_DBT_ENV = {"DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "PWD": str(REPO_ROOT)}


def _run_dbt(url: str, tmp_path: Path, *args: str, manifest=None) -> subprocess.CompletedProcess:
    """Run the repo's dbt project against ``url`` the way a user does (``dbt ARGS`` from the
    repo root), in process, over ``manifest`` when given: dbt's console output is the
    result's ``stdout`` (and a ``dbt parse``'s Manifest its ``manifest``); a failed command
    raises ``AssertionError`` with its tail."""
    from dbt.cli.main import dbtRunner

    argv = [
        *args,
        *("--project-dir", str(REPO_ROOT), "--profiles-dir", str(REPO_ROOT)),
        *("--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")),
    ]
    out = io.StringIO()
    with _environment({**_DBT_ENV, "RELORE_DATABASE_URL": url}), contextlib.redirect_stdout(out):
        done = dbtRunner(manifest=manifest).invoke(argv)
    _settle_garbage()
    stdout = out.getvalue()
    if not done.success:
        raise AssertionError(
            f"dbt {' '.join(args)} failed:\n{stdout[-6000:]}\n{done.exception or ''}"
        )
    result = subprocess.CompletedProcess(["dbt", *argv], 0, stdout, "")
    result.manifest = done.result if args[:1] == ("parse",) else None
    return result


def _settle_garbage() -> None:
    """Collect dbt's garbage now and freeze what lives on (gc.freeze): dbt leaves this
    process some 300,000 long-lived objects (its modules, a parsed project), and a full
    collection walking them all held a test's daemon's event loop for half a second at a
    time (tests/fixtures/loop_watch.py). Frozen objects are never walked; unfreezing first
    lets the next collection free what a later invocation replaced."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    """``os.environ`` with ``values`` set for the block (dbt reads its environment at each
    invocation: the profile's ``env_var``), put back after."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
