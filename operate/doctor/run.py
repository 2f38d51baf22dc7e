"""Running the doctor: the migrations check first (without the schema nothing else can
be asked), then every other check, each guarded so a database error is a FAIL line, never a
traceback; printed as lines or JSON."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import TextIO

import psycopg

from relore.operate import database, migrations
from relore.operate.doctor.access import check_auth, check_permissions, check_reader
from relore.operate.doctor.check import FAIL, OK, WARN, Check, _short, exit_code
from relore.operate.doctor.derived import check_authority, check_build, check_semantic
from relore.operate.doctor.extracts import _repos, check_extract_recent, check_passes


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
        checks += _guarded("schedule", lambda: _schedule_check(conn))
    return checks


def _schedule_check(conn: psycopg.Connection) -> list[Check]:
    from relore.operate.doctor import schedule

    return schedule.check(conn)


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
