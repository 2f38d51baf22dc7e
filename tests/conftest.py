"""Session fixtures: a throwaway embedded Postgres cluster, fresh databases, dbt, fake GitHub.

Nothing here skips: a machine that cannot start the embedded Postgres fails the suite.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

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


@pytest.fixture(scope="session")
def pg_cluster(tmp_path_factory) -> database.EmbeddedPaths:
    """The session's embedded cluster: ``pg_cluster.url(...)`` is the superuser's URL (with
    its password), ``pg_cluster.writer_url(...)`` the writer's."""
    paths = database.EmbeddedPaths(tmp_path_factory.mktemp("pg"))
    database.start_embedded(paths)
    yield paths
    database.stop_embedded(paths)


def _create_database(paths: database.EmbeddedPaths, name: str) -> str:
    with psycopg.connect(paths.url(database="postgres"), autocommit=True) as conn:
        conn.execute(f"drop database if exists {name} with (force)")
    return database.ensure_embedded_database(paths, name)


@pytest.fixture
def db_url(pg_cluster) -> str:
    """A new, migrated database for one test; the writer's URL (relore_writer, not a
    superuser, with its password)."""
    return _create_database(pg_cluster, f"t_{os.getpid()}_{next(_db_names)}")


@pytest.fixture(scope="module")
def module_db_url(pg_cluster) -> str:
    """A new, migrated database shared by one test module."""
    return _create_database(pg_cluster, f"m_{os.getpid()}_{next(_db_names)}")


@pytest.fixture(scope="session")
def run_dbt():
    """``run_dbt(url, tmp_path, *args)``: the repo's dbt project, run as a user runs it."""
    return _run_dbt


def _run_dbt(url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run the repo's dbt project against ``url`` the way a user does: plain ``dbt``."""
    env = {**os.environ, "RELORE_DATABASE_URL": url, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    dbt = Path(sys.executable).parent / "dbt"
    result = subprocess.run(
        [
            str(dbt),
            *args,
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"dbt {' '.join(args)} failed:\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}"
        )
    return result
