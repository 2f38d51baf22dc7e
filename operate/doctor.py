"""``relored doctor``: is this deployment healthy, and if not, what to do about it.

Each check is one line, ``LEVEL name: detail — what to do``, LEVEL being OK, WARN or FAIL.
The exit status follows the monitoring-plugin convention, so a cron wrapper, a Kubernetes
probe or Nagios can use it as it is: 0 every check OK, 1 a WARN and no FAIL, 2 any FAIL.

The doctor reads; it changes nothing. It connects with the writer's URL (it does not
migrate), and once as the reader role, inside a transaction it always rolls back, to prove
the reader cannot write. It also tries to log in with no password as the writer, the reader
and ``postgres`` (as a local attacker would), and checks who else can reach the socket and
an embedded cluster's files.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg

from relore.extract import github_client
from relore.operate import database, migrations
from relore.operate.exits import ExitStatus

OK, WARN, FAIL = "OK", "WARN", "FAIL"
EXIT_CODES = {OK: ExitStatus.OK, WARN: ExitStatus.CHECK_WARNED, FAIL: ExitStatus.CHECK_FAILED}

EXTRACT_WARN_HOURS = 24  # no successful extract run in a day: the cron is not running
EXTRACT_FAIL_HOURS = 24 * 7  # a week: the index is stale enough to mislead
WEDGED_AFTER = 2  # failed runs in a row landing nothing (the runner's own threshold)
STUCK_RUNNING_HOURS = 6  # a run "running" this long was killed or hangs
PROBE_TABLES_MAX = 50  # marts tables the reader tries to insert into
# What the reader may write without a grant of its own, through PUBLIC (migrations'
# CLOSE_READER_WRITES revokes each): tried as a hostile session would.
SESSION_WRITES = {
    "temporary tables": "create temporary table relore_doctor_probe (x int)",
    "large objects": "select lo_from_bytea(0, 'relore doctor')",
    "advisory locks": "select pg_try_advisory_xact_lock(0)",
}
# raw object types that marts.threads / marts.documents derive from: a newer row of these
# that no mart row reflects means a `dbt build` is owed.
DERIVED_TYPES = ("issue", "issue_comment", "review_comment", "review")


@dataclass(frozen=True)
class Check:
    level: str
    name: str
    detail: str
    action: str = ""

    def line(self) -> str:
        text = f"{self.level:<4} {self.name}: {self.detail}"
        return f"{text} — {self.action}" if self.action else text


def exit_code(checks: Iterable[Check]) -> int:
    return max((EXIT_CODES[c.level] for c in checks), default=ExitStatus.OK)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    seconds = max(0.0, float(seconds))
    if seconds < 120:
        return f"{seconds:.0f}s ago"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f}h ago"
    return f"{seconds / 86400:.1f}d ago"


def _short(text: str | None, limit: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unreachable_action(error: str | None, env) -> str | None:
    """What to check when a run failed because nothing answered at the GitHub API it asked
    (the second `make demo` once asked the previous run's fake GitHub): never "wait for the
    next run", which asks the same address."""
    asked = github_client.unreachable_origin(error)
    if asked is None:
        return None
    configured = env.get("RELORE_GITHUB_API_URL") or ""
    if github_client.same_origin(asked, configured or github_client.DEFAULT_API_URL):
        return (
            f"nothing answered at {asked}, the API RELORE_GITHUB_API_URL names: check it is up "
            "and reachable from where the extract runs (a demo's fake GitHub takes a new port "
            "each run), or set RELORE_GITHUB_API_URL to where it answers; the next run asks "
            "the same address"
        )
    here = configured or f"unset ({github_client.DEFAULT_API_URL})"
    return (
        f"the run could not connect to {asked}, but RELORE_GITHUB_API_URL here is {here}: run "
        "the extract with RELORE_GITHUB_API_URL set to where the API answers (a demo's fake "
        "GitHub takes a new port each run), else the next run asks the same address"
    )


# --- the checks ------------------------------------------------------------------------------


def check_migrations(conn: psycopg.Connection) -> Check:
    applied = migrations.applied_versions(conn)
    latest = migrations.LATEST
    missing = [v for v, _, _ in migrations.STEPS if v not in applied]
    ahead = [v for v in applied if v > latest]
    if not applied:
        return Check(
            FAIL,
            "migrations",
            "the raw and ops schemas do not exist (never migrated)",
            "run `relored migrate` with the writer's credentials",
        )
    if ahead:
        return Check(
            FAIL,
            "migrations",
            f"the database is at version {max(applied)}, newer than this relored "
            f"(which knows up to {latest})",
            "deploy the relored release that migrated it (both ends share one version)",
        )
    if missing:
        return Check(
            FAIL,
            "migrations",
            f"{len(missing)} step(s) not applied ({', '.join(map(str, missing))}); "
            f"this relored expects version {latest}",
            "run `relored migrate` with the writer's credentials",
        )
    return Check(OK, "migrations", f"at version {latest}")


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


def _repos(conn: psycopg.Connection) -> list[tuple[int, str]]:
    return [tuple(r) for r in conn.execute("select repo_id, full_name from ops.repos order by 2")]


def check_extract_recent(conn: psycopg.Connection, repos, env=None) -> list[Check]:
    if not repos:
        return [
            Check(
                WARN,
                "extract",
                "no repository has been extracted",
                "run `relored extract --repo owner/name`",
            )
        ]
    ages = dict(
        conn.execute(
            """
            select repo_id, extract(epoch from now() - max(finished_at))::float8
            from ops.pass_runs where status = 'ok' group by repo_id
            """
        ).fetchall()
    )
    # each repository's latest finished run, whatever its outcome
    latest = {
        row[0]: row[1:]
        for row in conn.execute(
            """
            select distinct on (repo_id) repo_id, pass_name, status,
                extract(epoch from now() - finished_at)::float8, error
            from ops.pass_runs where finished_at is not null
            order by repo_id, finished_at desc, run_id desc
            """
        )
    }
    checks = []
    for repo_id, name in repos:
        age = ages.get(repo_id)
        detail = f"last successful pass run {_age(age)}"
        action = (
            f"is the extract schedule running? run `relored extract --repo {name}` "
            "and read its error"
        )
        level = OK
        if repo_id in latest and latest[repo_id][1] == "failed":
            pass_name, _, ago, error = latest[repo_id]
            detail += (
                f"; the latest run ({pass_name}, {_age(ago)}) failed: {_short(error or '?', 160)}"
            )
            level = WARN
            action = _unreachable_action(error, env or {}) or action
        if age is None or age > EXTRACT_FAIL_HOURS * 3600:
            level = FAIL
        elif age > EXTRACT_WARN_HOURS * 3600:
            level = WARN
        checks.append(Check(level, f"extract {name}", detail, "" if level == OK else action))
    return checks


def check_passes(conn: psycopg.Connection, repos, env=None) -> list[Check]:
    """A pass whose latest runs all failed having landed nothing is wedged: its mark stands
    still while the schedule keeps running it."""
    rows = conn.execute(
        """
        select repo_id, pass_name, status, rows_written, error,
            extract(epoch from now() - started_at)::float8 as started_ago,
            extract(epoch from now() - finished_at)::float8 as finished_ago
        from (
            select *, row_number() over (partition by repo_id, pass_name order by run_id desc)
                as recency
            from ops.pass_runs
        ) as runs
        where recency <= 20
        order by repo_id, pass_name, run_id desc
        """
    ).fetchall()
    marks = {
        (r[0], r[1]): r[2]
        for r in conn.execute(
            "select repo_id, pass_name, high_water::text, "
            "extract(epoch from now() - updated_at)::float8 from ops.checkpoints"
        )
    }
    runs: dict[tuple[int, str], list[tuple]] = {}
    for row in rows:
        runs.setdefault((row[0], row[1]), []).append(row[2:])
    checks = []
    for repo_id, name in repos:
        bad = []
        passes = sorted(p for (r, p) in runs if r == repo_id)
        for pass_name in passes:
            history = runs[(repo_id, pass_name)]
            latest_status, _, latest_error, started_ago, _ = history[0]
            if latest_status == "running":
                if started_ago > STUCK_RUNNING_HOURS * 3600:
                    bad.append(
                        Check(
                            WARN,
                            f"pass {name} {pass_name}",
                            f"a run started {_age(started_ago)} never finished",
                            "it was killed or hangs: check the extract job; the next run "
                            "resumes from the mark",
                        )
                    )
                history = history[1:]
                if not history:
                    continue
                latest_status, _, latest_error, _, _ = history[0]
            failed_empty = 0
            for status, written, *_ in history:
                if status != "failed" or written:
                    break
                failed_empty += 1
            mark = marks.get((repo_id, pass_name))
            where = f"; high-water stuck at {mark}" if mark else ""
            unreachable = _unreachable_action(latest_error, env or {})
            if failed_empty >= WEDGED_AFTER:
                bad.append(
                    Check(
                        FAIL,
                        f"pass {name} {pass_name}",
                        f"wedged: the last {failed_empty} runs failed landing nothing{where}; "
                        f"last error: {_short(latest_error)}",
                        unreachable
                        or "a page GitHub cannot serve, so rerunning will not help: fetch the "
                        f"threads with `relored extract sweep --repo {name}` and see "
                        "docs/operations.md (a wedged pass)",
                    )
                )
            elif latest_status == "failed":
                bad.append(
                    Check(
                        WARN,
                        f"pass {name} {pass_name}",
                        f"the last run failed: {_short(latest_error)}",
                        unreachable
                        or "the next scheduled run retries from the mark; FAIL if it fails again",
                    )
                )
        if bad:
            checks += bad
        elif passes:
            checks.append(
                Check(OK, f"passes {name}", f"{len(passes)} passes, latest runs ok or running")
            )
        else:
            checks.append(
                Check(
                    WARN,
                    f"passes {name}",
                    "no pass has run",
                    f"run `relored extract --repo {name}`",
                )
            )
    return checks


def _landed(conn: psycopg.Connection, repo_id: int | None = None) -> bool:
    """Whether raw holds any row the marts derive from (an index probe, not a scan)."""
    return conn.execute(
        "select exists (select 1 from raw.github_objects where object_type = any(%s) "
        "and (%s::bigint is null or repo_id = %s))",
        (list(DERIVED_TYPES), repo_id, repo_id),
    ).fetchone()[0]


def check_build(conn: psycopg.Connection, repos) -> list[Check]:
    """Raw rows newer than anything the marts derived: `dbt build` has not run since."""
    if not repos:
        return []
    present = [
        name
        for name in ("threads", "documents")
        if conn.execute("select to_regclass(%s) is not null", (f"marts.{name}",)).fetchone()[0]
    ]
    if not present:
        if not _landed(conn):
            return [Check(OK, "build", "nothing landed yet, nothing to build")]
        return [
            Check(
                WARN,
                "build",
                "raw holds rows but the marts have never been built",
                "run `dbt build` from the dbt project directory",
            )
        ]
    newest_derived = " union all ".join(
        f"select max(source_loaded_at) as at from marts.{name} where repo_id = %(r)s"
        for name in present
    )
    checks = []
    for repo_id, name in repos:
        built = conn.execute(
            f"select max(at) from ({newest_derived}) as d", {"r": repo_id}
        ).fetchone()[0]
        if built is None:
            if _landed(conn, repo_id):
                checks.append(
                    Check(
                        WARN,
                        f"build {name}",
                        "raw holds rows but the marts hold nothing for it",
                        "run `dbt build`",
                    )
                )
            else:
                checks.append(Check(OK, f"build {name}", "nothing landed yet"))
            continue
        # loaded_at is indexed: only the rows past the marts' newest are read.
        newer, newest_ago = conn.execute(
            """
            select count(*), extract(epoch from now() - max(loaded_at))::float8
            from raw.github_objects
            where loaded_at > %s and repo_id = %s and object_type = any(%s)
            """,
            (built, repo_id, list(DERIVED_TYPES)),
        ).fetchone()
        if newer:
            checks.append(
                Check(
                    WARN,
                    f"build {name}",
                    f"{newer} raw rows (newest landed {_age(newest_ago)}) are newer than "
                    "anything the marts derived",
                    "run `dbt build`; if one ran since, those rows changed nothing the marts "
                    "show (a reaction, an unchanged edit) and the next change clears this",
                )
            )
        else:
            checks.append(Check(OK, f"build {name}", "the marts derive every landed row"))
    return checks


def check_authority(conn: psycopg.Connection, repos) -> list[Check]:
    counts = dict(
        conn.execute(
            "select repo_id, count(*) from ops.collaborator_permissions group by repo_id"
        ).fetchall()
    )
    checks = []
    for repo_id, name in repos:
        resolved = counts.get(repo_id, 0)
        if resolved:
            checks.append(
                Check(OK, f"authority {name}", f"write access known for {resolved} authors")
            )
            continue
        # Nobody asked yet: is there anyone whose association does not settle it?
        pending = conn.execute(
            """
            select exists (
                select 1 from raw.github_objects
                where repo_id = %s and not is_deleted
                    and object_type in (
                        'issue', 'issue_comment', 'review_comment', 'review', 'review_graphql'
                    )
                    and coalesce(payload ->> 'author_association',
                        payload ->> 'authorAssociation') not in ('OWNER', 'COLLABORATOR')
            )
            """,
            (repo_id,),
        ).fetchone()[0]
        if pending:
            checks.append(
                Check(
                    WARN,
                    f"authority {name}",
                    "no author's write access has been asked, so the authoritative tier is "
                    "empty (MEMBER means 'not asked yet')",
                    f"run `relored extract authority --repo {name}` (needs a token with push "
                    "access)",
                )
            )
        else:
            checks.append(Check(OK, f"authority {name}", "no author needs asking"))
    return checks


def check_semantic(conn: psycopg.Connection, repos) -> list[Check]:
    """The semantic tier: off is fine (said, with how to turn it on); on but behind the
    passages dbt derived is a WARN (questions miss what was not embedded)."""
    from relore.serve.semantic import store

    name = "semantic tier"
    if not store.has_vector(conn):
        return [
            Check(
                OK,
                name,
                "off: this database has no pgvector (search answers by words only)",
                "to turn it on, a superuser runs `CREATE EXTENSION vector;`, then `relored embed`",
            )
        ]
    try:
        from relore.serve.semantic.encoder import Encoder
    except ImportError as exc:
        return [
            Check(
                OK,
                name,
                f"off: the semantic extra is not installed ({exc.name} is missing)",
                "to turn it on: pip install 'relore[semantic]', then `relored embed`",
            )
        ]
    ready = conn.execute(
        "select to_regclass('semantic.embeddings') is not null"
        " and to_regclass('marts.semantic_passages') is not null"
    ).fetchone()[0]
    if not ready:
        return [Check(OK, name, "off: nothing embedded yet", "run `relored embed` after dbt build")]
    model_key = Encoder().model_key
    checks = []
    for repo_id, repo in repos:
        passages, embedded, _ = conn.execute(
            store.COVERAGE, {"repo_id": repo_id, "model_key": model_key}
        ).fetchone()
        detail = f"{embedded:,} of {passages:,} passages embedded"
        if embedded < passages:
            checks.append(
                Check(WARN, f"{name} {repo}", detail, f"run `relored embed --repo {repo}`")
            )
        else:
            checks.append(Check(OK, f"{name} {repo}", detail))
    return checks


# --- running them ----------------------------------------------------------------------------


def _guarded(name: str, fn: Callable[[], list[Check]]) -> list[Check]:
    try:
        return fn()
    except psycopg.Error as exc:
        return [
            Check(
                FAIL,
                name,
                f"could not check: {_short(str(exc))}",
                "run `relored migrate`; if it persists, the schema was changed by hand",
            )
        ]


def run_checks(url: str, env=None) -> list[Check]:
    """Every check against the writer URL ``url``; never raises for a database problem."""
    env = os.environ if env is None else env
    try:
        conn = database.connect(url, autocommit=True)
    except database.DatabaseError as exc:
        return [
            Check(
                FAIL,
                "database",
                _short(exc.what, 400),
                exc.hint or "start it (`relored db start`) or fix RELORE_DATABASE_URL",
            )
        ]
    checks: list[Check] = []
    with conn:
        version = conn.execute("show server_version").fetchone()[0]
        checks.append(
            Check(OK, "database", f"{database.describe(url)} reachable (PostgreSQL {version})")
        )
        checks.append(check_auth(url))
        checks.append(check_permissions(url))
        checks.append(check_migrations(conn))
        if not migrations.applied_versions(conn):
            return checks  # nothing else exists to look at
        checks += _guarded("reader", lambda: check_reader(url, env))
        repos = _repos_or_fail(conn)
        if isinstance(repos, Check):
            checks.append(repos)
            return checks
        checks += _guarded("extract", lambda: check_extract_recent(conn, repos, env))
        checks += _guarded("passes", lambda: check_passes(conn, repos, env))
        checks += _guarded("build", lambda: check_build(conn, repos))
        checks += _guarded("authority", lambda: check_authority(conn, repos))
        checks += _guarded("semantic tier", lambda: check_semantic(conn, repos))
    return checks


def _repos_or_fail(conn: psycopg.Connection):
    try:
        return _repos(conn)
    except psycopg.Error as exc:
        return Check(FAIL, "repos", f"could not read ops.repos: {_short(str(exc))}")


def render(checks: list[Check], out: TextIO, *, as_json: bool = False) -> None:
    code = exit_code(checks)
    if as_json:
        status = {0: "ok", 1: "warn", 2: "fail"}[code]
        payload = {"status": status, "exit_code": code, "checks": [asdict(c) for c in checks]}
        print(json.dumps(payload, ensure_ascii=False), file=out)
        return
    for check in checks:
        print(check.line(), file=out)
    counts = {level: sum(c.level == level for c in checks) for level in (OK, WARN, FAIL)}
    print(f"{counts[OK]} ok, {counts[WARN]} warn, {counts[FAIL]} fail", file=out)


def main(env=None, out: TextIO | None = None, *, as_json: bool = False) -> int:
    """``relored doctor [--json]``: run every check, print them, return 0/1/2 (OK/WARN/FAIL)."""
    env = os.environ if env is None else env
    out = out or sys.stdout
    checks = run_checks(database.database_url(env), env)
    render(checks, out, as_json=as_json)
    return exit_code(checks)
