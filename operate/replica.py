"""Hot standbys of the embedded server: the same PostgreSQL binaries, a base backup
(``pg_basebackup -R``), streaming replication over loopback, read-only reads.

Reads scale on streaming replicas: ``relored serve`` is read-only and keeps nothing an agent
does, so a daemon pointed at a standby's reader (``RELORE_READER_DATABASE_URL``) answers every
read verb. Writes (``relored extract``, ``dbt build``, ``relored embed``, ``relored clone``)
stay on the primary and reach each standby by WAL replay, the ``semantic`` vectors with them.
The search index is not in Postgres: each daemon keeps its own under ``RELORE_INDEX_DIR``,
keyed by the server it reads (host, port, database), built from that server's marts on the
first search and refreshed when replay moves their ``written_at`` (docs/scaling.md).

A primary here is an embedded cluster (``database.start_embedded``: roles, passwords,
migrations, pgvector) restarted to listen on ``127.0.0.1:<port>`` too; its socket is then
named for that port, so its URLs are the TCP ones :class:`Server` makes. A standby is a copy
of its data directory and of its passwords file (the roles are the primary's), started with
``standby.signal``: it replays, answers reads, and refuses every write. Only the superuser
replicates (the writer and the reader are ``noreplication``), over the ``host replication``
lines of ``database.HBA``.

Used by ``tests/integration/test_hot_standby.py`` and ``benchmarks/replica_reads.py``.
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg

from relore.operate import cluster, database, migrations, pgpass

LOOPBACK = "127.0.0.1"
# a primary keeps this much WAL for standbys that fall behind (no slots to leave behind)
PRIMARY = {"wal_level": "replica", "max_wal_senders": "10", "wal_keep_size": "'1GB'"}
# a standby answers reads while it replays, and tells the primary what its queries still
# read, so a long read (an index build's snapshot) is not cancelled by replayed cleanup
STANDBY = {"hot_standby": "on", "hot_standby_feedback": "on"}


@dataclass(frozen=True)
class Server:
    """An embedded cluster listening on ``LOOPBACK:port`` besides its socket."""

    paths: database.EmbeddedPaths
    port: int

    def url(self, user: str, dbname: str = database.DATABASE_NAME) -> str:
        password = self.paths.password(user) or ""
        auth = f"{user}:{quote(password, safe='')}"
        return f"postgresql://{auth}@{LOOPBACK}:{self.port}/{dbname}"

    @property
    def writer_url(self) -> str:
        return self.url(database.WRITER)

    @property
    def reader_url(self) -> str:
        return self.url(migrations.READER_ROLE)

    @property
    def superuser_url(self) -> str:
        return self.url(database.SUPERUSER, "postgres")


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _listening(port: int) -> dict:
    return {"listen_addresses": f"'{LOOPBACK}'", "port": str(port)}


def serve_on_loopback(paths: database.EmbeddedPaths, port: int | None = None) -> Server:
    """Restart the embedded cluster at ``paths`` (started once by ``start_embedded``) as a
    primary listening on loopback: WAL senders on, WAL kept for standbys."""
    port = port or free_port()
    database.stop_embedded(paths)
    cluster._pg_ctl_start(paths, cluster._system_user(), _listening(port) | PRIMARY)
    return Server(paths, port)


def make_standby(primary: Server, home: Path, port: int | None = None) -> Server:
    """A hot standby of ``primary`` in ``home``: a base backup streamed over loopback,
    ``standby.signal`` and ``primary_conninfo`` written by ``pg_basebackup -R``, then started
    on its own loopback port. Returns once it answers reads."""
    port = port or free_port()
    user = cluster._system_user()
    paths = database.EmbeddedPaths(home)
    cluster._prepare(paths, user)
    pgpass._write_private(paths.passwords, primary.paths.passwords.read_text())
    password = primary.paths.password(database.SUPERUSER) or ""
    conninfo = psycopg.conninfo.make_conninfo(
        host=LOOPBACK,
        port=primary.port,
        user=database.SUPERUSER,
        password=password,
        application_name=f"relore_standby_{port}",
    )
    backup = [str(cluster._bin("pg_basebackup")), "-D", str(paths.data), "-d", conninfo]
    result = cluster._run_pg([*backup, "-R", "-X", "stream", "-c", "fast"], user)
    if result.returncode != 0:
        raise database.DatabaseError(f"pg_basebackup failed:\n{result.stdout}\n{result.stderr}")
    cluster._pg_ctl_start(paths, user, _listening(port) | STANDBY)
    return Server(paths, port)


def stop(server: Server) -> bool:
    return database.stop_embedded(server.paths)


def wait_replayed(primary: Server, standbys: list[Server], timeout: float = 60.0) -> str:
    """Wait until every standby has replayed the primary's WAL as it is now; the LSN."""
    with psycopg.connect(primary.writer_url, autocommit=True) as conn:
        lsn = conn.execute("select pg_current_wal_lsn()::text").fetchone()[0]
    deadline = time.monotonic() + timeout
    for standby in standbys:
        with psycopg.connect(standby.reader_url, autocommit=True) as conn:
            while True:
                done = conn.execute(
                    "select pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn,)
                ).fetchone()[0]
                if done:
                    break
                if time.monotonic() > deadline:
                    raise database.DatabaseError(
                        f"the standby on port {standby.port} has not replayed {lsn} "
                        f"after {timeout:.0f} s"
                    )
                time.sleep(0.05)
    return lsn
