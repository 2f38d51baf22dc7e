"""Who can reach the database and what they can do there: the reader cannot write
(tried inside a transaction that rolls back), no role logs in without a password, and
nobody else can reach the socket or an embedded cluster's files."""

from __future__ import annotations

import getpass
import re
import stat
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg

from relore.operate import database, migrations
from relore.operate.doctor.check import FAIL, OK, WARN, Check, _short

PROBE_TABLES_MAX = 50  # marts tables the reader tries to insert into


# What the reader may write without a grant of its own, through PUBLIC (migrations'
# CLOSE_READER_WRITES revokes each): tried as a hostile session would.
SESSION_WRITES = {
    "temporary tables": "create temporary table relore_doctor_probe (x int)",
    "large objects": "select lo_from_bytea(0, 'relore doctor')",
    "advisory locks": "select pg_try_advisory_xact_lock(0)",
}


def check_reader(writer_url: str, env) -> list[Check]:
    """Connect as the serving role and prove it can write nowhere (always rolled back)."""
    url = database.reader_url(writer_url, env)
    try:
        conn = database.connect(url, autocommit=True)
    except database.DatabaseError as exc:
        return [
            Check(
                FAIL,
                "reader",
                f"the serving role cannot connect: {_short(str(exc))}",
                "run `relored migrate` (it creates relore_reader), give it a password, and set "
                "RELORE_READER_DATABASE_URL (for serve, and for the doctor too)",
            )
        ]
    problems: list[str] = []
    with conn:
        role, read_only = conn.execute(
            "select current_user, current_setting('default_transaction_read_only')"
        ).fetchone()
        flags = conn.execute(
            "select rolsuper, rolcreaterole, rolcreatedb, rolbypassrls "
            "from pg_roles where rolname = current_user"
        ).fetchone()
        names = ("superuser", "createrole", "createdb", "bypassrls")
        problems += [f"is {n}" for n, on in zip(names, flags or (), strict=False) if on]
        if conn.execute(
            "select has_database_privilege(current_user, current_database(), 'CREATE')"
        ).fetchone()[0]:
            problems.append("can create schemas in the database")
        creatable = [
            r[0]
            for r in conn.execute(
                "select nspname from pg_namespace "
                "where has_schema_privilege(current_user, oid, 'CREATE') "
                "and nspname not like 'pg\\_%' and nspname <> 'information_schema' "
                "order by 1"
            )
        ]
        if creatable:
            problems.append(f"can create tables in schema {', '.join(creatable)}")
        writable = [
            r[0]
            for r in conn.execute(
                """
                select format('%I.%I', n.nspname, c.relname)
                from pg_class as c
                join pg_namespace as n on n.oid = c.relnamespace
                where c.relkind in ('r', 'p', 'v', 'm', 'f')
                    and n.nspname not like 'pg\\_%' and n.nspname <> 'information_schema'
                    and (has_table_privilege(current_user, c.oid, 'INSERT')
                        or has_table_privilege(current_user, c.oid, 'UPDATE')
                        or has_table_privilege(current_user, c.oid, 'DELETE')
                        or has_table_privilege(current_user, c.oid, 'TRUNCATE'))
                order by 1
                """
            )
        ]
        readable_private = [
            r[0]
            for r in conn.execute(
                """
                select format('%I.%I', n.nspname, c.relname)
                from pg_class as c
                join pg_namespace as n on n.oid = c.relnamespace
                where c.relkind in ('r', 'p', 'v', 'm') and n.nspname in ('raw', 'ops')
                    and has_table_privilege(current_user, c.oid, 'SELECT')
                order by 1
                """
            )
        ]
        if readable_private:
            problems.append(f"can read {', '.join(readable_private[:5])} (raw/ops are private)")
        # The catalog says what is granted; now try, as a hostile session would: a read-write
        # transaction (default_transaction_read_only is a default, not a wall), rolled back.
        tried = _try_writes(conn)
        session = [name for name in SESSION_WRITES if name in tried]
        writable = sorted((set(writable) | set(tried)) - set(session))
        if writable:
            more = f" and {len(writable) - 5} more" if len(writable) > 5 else ""
            problems.append(f"can write {', '.join(writable[:5])}{more}")
        if session:
            problems.append(f"can store {', '.join(session)} with read-only turned off")
    checks = []
    if problems:
        checks.append(
            Check(
                FAIL,
                "reader",
                f"the serving role {role} {'; '.join(problems)}",
                _reader_action(role, problems),
            )
        )
    else:
        checks.append(
            Check(OK, "reader", f"{role} connects and can write nowhere (tried, rolled back)")
        )
    if read_only != "on":
        checks.append(
            Check(
                WARN,
                "reader-read-only",
                f"{role}'s sessions are not read-only by default",
                f"run `alter role {role} set default_transaction_read_only = on` "
                "(relored migrate does it for relore_reader)",
            )
        )
    return checks


def _reader_action(role: str, problems: list[str]) -> str:
    said = " ".join(problems)
    if "large objects" in said or "advisory locks" in said:
        return (
            "as a superuser, revoke the large-object writers and advisory locks from PUBLIC "
            '(the statements are in docs/operations.md, "The reader writes nothing"); serve '
            "must be SELECT-only"
        )
    if "temporary tables" in said:
        return (
            "as the database's owner, `revoke temporary on database <db> from public` "
            "(`relored migrate` does it); serve must be SELECT-only"
        )
    return (
        f"revoke it (`revoke insert, update, delete, truncate on all tables in schema "
        f"marts from {role}`), or drop the grant that gave it; serve must be SELECT-only"
    )


def _try_writes(conn: psycopg.Connection) -> list[str]:
    """What the reader managed to write, inside a read-write transaction always rolled back."""
    wrote: list[str] = []
    tables = [
        r[0]
        for r in conn.execute(
            """
            select format('%%I.%%I', n.nspname, c.relname)
            from pg_class as c
            join pg_namespace as n on n.oid = c.relnamespace
            where n.nspname = any(%s) and c.relkind in ('r', 'p')
            order by 1
            limit %s
            """,
            (list(migrations.SERVED_SCHEMAS), PROBE_TABLES_MAX),
        )
    ]
    conn.execute("begin transaction read write")
    try:
        attempts = [(t, f"insert into {t} select * from {t} where false") for t in tables]
        attempts += [
            (f"{s} (create table)", f"create table {s}.relore_doctor_probe (x int)")
            for s in migrations.SERVED_SCHEMAS
        ]
        attempts += list(SESSION_WRITES.items())
        for target, sql in attempts:
            conn.execute("savepoint relore_doctor")
            try:
                conn.execute(sql)
                wrote.append(target)
            except psycopg.errors.InsufficientPrivilege:
                pass
            except psycopg.Error:
                pass  # refused for another reason (a generated column): not a write path
            conn.execute("rollback to savepoint relore_doctor")
    finally:
        conn.execute("rollback")
    return wrote


def check_auth(url: str) -> Check:
    """Does any role get in with no password? Tried as an attacker would — as the URL's role,
    the reader and ``postgres``, libpq's password file and PGPASSWORD out of the way — and,
    where this role may read it, ``pg_hba_file_rules`` names the trust lines."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    socket_dir = _socket_dir(url)
    try:
        own_name = getpass.getuser()
    except (KeyError, OSError):  # a uid with no passwd entry
        own_name = ""
    roles = list(dict.fromkeys([parts.username or own_name, migrations.READER_ROLE, "postgres"]))
    let_in, maybe_peer = [], []
    for role in roles:
        bare = urlunsplit(parts._replace(netloc=f"{quote(role, safe='')}@{host}"))
        try:
            psycopg.connect(
                bare, password="", passfile=database.NO_PASSFILE, connect_timeout=5
            ).close()
        except psycopg.Error:
            continue
        # over a socket, the OS account's own name may be `peer`, which is not an open door
        (maybe_peer if socket_dir is not None and role == own_name else let_in).append(role)
    trust_lines = _trust_lines(url)
    if let_in or trust_lines:
        where = f" (pg_hba.conf {', '.join(trust_lines)})" if trust_lines else ""
        who = f"logs in with no password as {', '.join(let_in)}" if let_in else "has"
        return Check(
            FAIL,
            "auth",
            f"the server {who}{' trust lines' if not let_in else ''}{where}: any local account "
            "reaching it is that role (the superuser can run programs)",
            "the embedded server: `relored db start` closes it (passwords, scram-sha-256, "
            "reload); your own server: replace `trust` with scram-sha-256 in pg_hba.conf, give "
            "every role a password, `select pg_reload_conf()`",
        )
    note = f"; {', '.join(maybe_peer)} is this OS account's own name (peer?)" if maybe_peer else ""
    return Check(OK, "auth", f"no role logs in without a password (tried {', '.join(roles)}){note}")


def _trust_lines(url: str) -> list[str]:
    """'line N' for each trust rule, when this role may read pg_hba_file_rules (superusers)."""
    try:
        with database.connect(url) as conn:
            rows = conn.execute(
                "select line_number from pg_hba_file_rules where auth_method = 'trust' order by 1"
            ).fetchall()
    except (psycopg.Error, database.DatabaseError):
        return []
    return [f"line {r[0]} trust" for r in rows]


def _socket_dir(url: str) -> Path | None:
    found = re.search(r"[?&]host=([^&]+)", url)
    host = unquote(found.group(1)) if found else urlsplit(url).hostname
    return Path(host) if host and host.startswith("/") else None


def _mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return None


def check_permissions(url: str) -> Check:
    """Who else can reach the socket, and — for a cluster laid out as ``relored db start``
    lays one out (``<home>/run`` beside ``<home>/pgdata``) — its files."""
    socket_dir = _socket_dir(url)
    if socket_dir is None:
        return Check(OK, "permissions", "a TCP server: no local files to check")
    home = socket_dir.parent
    embedded = socket_dir.name == "run" and (home / "pgdata").is_dir()
    if not embedded:
        mode = _mode(socket_dir)
        if mode is not None and mode & 0o007:
            return Check(
                WARN,
                "permissions",
                f"{socket_dir} is {mode:04o}: every local account reaches this server's "
                "socket, so only its passwords stand between them and the data",
                f"`chmod o-rwx {socket_dir}` (and let relore's accounts in through a group)",
            )
        return Check(OK, "permissions", f"{socket_dir} is closed to other accounts")
    paths = database.EmbeddedPaths(home)
    loose = []
    for path, allowed in (
        (paths.home, 0o700),
        (paths.run, 0o700),
        (paths.data, 0o700),
        (paths.passwords, 0o600),
    ):
        mode = _mode(path)
        if mode is None:
            if path == paths.passwords:
                loose.append(f"{path} is missing (a cluster from before passwords)")
            continue
        if mode & ~allowed & 0o777:
            loose.append(f"{path} is {mode:04o}")
    if loose:
        return Check(
            FAIL,
            "permissions",
            f"the embedded server's files are open: {'; '.join(loose)}",
            "run `relored db start` (it closes them: 0700 directories, a 0600 passwords file)",
        )
    return Check(OK, "permissions", f"{home}: directories 0700, passwords file 0600")
