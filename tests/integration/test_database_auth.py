"""Issue #12 §1: only relore's roles reach the embedded database, each with its password.

Each attack is what a local account or a stolen role would try; each passed before the fix
(`trust` auth, a world-connectable socket, extract and dbt as the superuser).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from fixtures.legacy_cluster import NO_PASSFILE, make_trust_cluster, trust_url

from relore.operate import cli, cluster, database

REPO_ROOT = Path(__file__).resolve().parents[2]

ROLES = ("postgres", "relore_writer", "relore_reader")
PSQL = shutil.which("psql") or "/usr/bin/psql"


def _psql_as(os_user: str, url: str) -> subprocess.CompletedProcess:
    command = [PSQL, url, "-Atc", "select current_user"]
    if os_user != "root":
        command = ["runuser", "-u", os_user, "--", *command]
    env = {"PATH": os.environ["PATH"], "PGPASSFILE": NO_PASSFILE, "PGCONNECT_TIMEOUT": "5"}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def _relored(env, *argv: str) -> str:
    out = io.StringIO()
    assert cli.main(list(argv), env=env, out=out, err=io.StringIO()) == 0
    return out.getvalue().strip()


@pytest.fixture(scope="module")
def user_cluster(tmp_path_factory):
    """A cluster as a user gets one: `relored db start` in a home made by a plain `mkdir`
    (mode 0755, unlike pytest's 0700 temporary directories), under a private directory
    (0700, like /root)."""
    base = tmp_path_factory.mktemp("user")
    base.chmod(0o700)
    home = base / "relore-home"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    env = {
        "RELORE_HOME": str(home),
        "PGPASSFILE": str(base / "dot-pgpass"),
        "PATH": os.environ["PATH"],
    }
    _relored(env, "db", "start")
    yield database.EmbeddedPaths(home), env
    _relored(env, "db", "stop")


@pytest.mark.parametrize("role", ROLES)
def test_another_local_user_cannot_connect_over_the_socket_as_any_role(user_cluster, role):
    paths, _ = user_cluster
    for url in (trust_url(paths, role), paths.url(role, "relore")):
        result = _psql_as("nobody", url)
        assert result.returncode != 0, f"nobody connected as {role}: {result.stdout}"
        assert role not in result.stdout
    # the same URL with its password works for root: the refusal is the door, not the test
    assert _psql_as("root", paths.url(role, "relore")).stdout.strip() == role


def test_db_url_prints_the_writer_and_reader_urls_that_log_in(user_cluster):
    _, env = user_cluster
    for argv, role in (
        (("db", "url"), "relore_writer"),
        (("db", "url", "--reader"), "relore_reader"),
    ):
        url = _relored(env, *argv)
        assert f"{role}:" in url  # with its password
        with psycopg.connect(url) as conn:
            assert conn.execute("select current_user").fetchone() == (role,)


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_plain_dbt_reaches_the_embedded_server_with_no_url_through_libpqs_password_file(
    user_cluster, tmp_path
):
    paths, env = user_cluster
    passfile = Path(env["PGPASSFILE"])
    assert stat.S_IMODE(passfile.stat().st_mode) == 0o600
    assert f"{paths.run}:5432:*:relore_writer:" in passfile.read_text()
    dbt_env = {k: v for k, v in os.environ.items() if not k.startswith(("RELORE_", "PG"))}
    dbt_env |= {"RELORE_HOME": env["RELORE_HOME"], "PGPASSFILE": env["PGPASSFILE"]}
    dbt = [str(Path(sys.executable).parent / "dbt"), "--no-use-colors", "debug"]
    dirs = ["--log-path", str(tmp_path / "l")]
    result = subprocess.run(
        [*dbt, *dirs], cwd=REPO_ROOT, env=dbt_env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "user: relore_writer" in result.stdout
    assert "Connection test: [OK connection ok]" in result.stdout
    # without the entry libpq has no password, and the server wants one
    dbt_env["PGPASSFILE"] = NO_PASSFILE
    result = subprocess.run(
        [*dbt, *dirs], cwd=REPO_ROOT, env=dbt_env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0


def test_db_start_again_keeps_one_pgpass_entry_and_the_same_passwords(user_cluster):
    paths, env = user_cluster
    before = paths.passwords.read_text()
    report = json.loads(_relored(env, "db", "start", "--json"))
    assert report["state"] == "running"
    assert paths.password("relore_writer") not in json.dumps(report)  # masked
    assert paths.passwords.read_text() == before
    assert Path(env["PGPASSFILE"]).read_text().count(f"{paths.run}:") == 1


@pytest.mark.parametrize("role", ROLES)
def test_no_role_logs_in_without_its_password(pg_cluster, role):
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(trust_url(pg_cluster, role), connect_timeout=5).close()
    wrong = trust_url(pg_cluster, role).replace(f"{role}@", f"{role}:guessed-password@")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(wrong, connect_timeout=5).close()


def test_pg_hba_has_no_trust_line(pg_cluster):
    with psycopg.connect(pg_cluster.url(database="postgres")) as conn:
        methods = {r[0] for r in conn.execute("select auth_method from pg_hba_file_rules")}
    assert methods == {"scram-sha-256"}


def test_writer_is_not_a_superuser_and_cannot_run_programs_or_read_server_files(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        user, is_super = conn.execute(
            "select current_user, rolsuper from pg_roles where rolname = current_user"
        ).fetchone()
        assert (user, is_super) == ("relore_writer", False)
        for attack in (
            "copy (select 1) to program 'id > /tmp/relore-pwned'",
            "select pg_read_file('/etc/passwd')",
            "create role relore_evil superuser login",
            "alter system set log_statement = 'none'",
            "create extension if not exists file_fdw",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(attack)
        owners = dict(
            conn.execute(
                "select nspname, pg_get_userbyid(nspowner) from pg_namespace "
                "where nspname in ('raw', 'ops', 'marts')"
            ).fetchall()
        )
    assert owners == dict.fromkeys(("raw", "ops", "marts"), "relore_writer")


def test_password_file_and_directories_are_closed_to_other_users(user_cluster):
    pg_cluster, _ = user_cluster

    def mode(path):
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(pg_cluster.passwords) == 0o600
    assert {p.name: mode(p) for p in (pg_cluster.home, pg_cluster.run, pg_cluster.data)} == {
        pg_cluster.home.name: 0o700,
        "run": 0o700,
        "pgdata": 0o700,
    }
    server_user = cluster._system_user()
    if server_user is not None:  # as root the server runs as its own user, who owns them
        import pwd

        uid = pwd.getpwnam(server_user).pw_uid
        assert pg_cluster.run.stat().st_uid == pg_cluster.home.stat().st_uid == uid


def test_deleting_a_roles_line_and_starting_again_rotates_its_password(user_cluster):
    paths, env = user_cluster
    old_url = paths.writer_url()
    kept = [
        line for line in paths.passwords.read_text().splitlines() if ":relore_writer:" not in line
    ]
    paths.passwords.write_text("\n".join(kept) + "\n")
    _relored(env, "db", "start")
    assert paths.writer_url() != old_url
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(old_url).close()
    with psycopg.connect(_relored(env, "db", "url")) as conn:
        assert conn.execute("select current_user").fetchone() == ("relore_writer",)
    assert stat.S_IMODE(paths.passwords.stat().st_mode) == 0o600
    assert paths.password("relore_writer") in Path(env["PGPASSFILE"]).read_text()


def test_a_trust_line_added_by_hand_is_gone_after_the_next_db_start(user_cluster):
    paths, env = user_cluster
    paths.hba.write_text("local all all trust\n" + paths.hba.read_text())
    with psycopg.connect(paths.url(database="postgres"), autocommit=True) as conn:
        conn.execute("select pg_reload_conf()")
    for _ in range(100):  # the reload is a signal: wait until the door is open
        try:
            psycopg.connect(trust_url(paths, "postgres")).close()
            break
        except psycopg.OperationalError:
            time.sleep(0.05)
    else:
        pytest.fail("the hand-added trust line never took effect")
    _relored(env, "db", "start")
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(trust_url(paths, "postgres")).close()
    assert "trust" not in database.hba_methods(paths.hba)


def test_db_start_as_root_opens_a_private_parent_for_search_only(user_cluster):
    paths, _ = user_cluster
    parent = paths.home.parent
    expected = 0o701 if cluster._system_user() else 0o700  # as root: the server passes
    assert stat.S_IMODE(parent.stat().st_mode) == expected  # never g+rx,o+r (listing)


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_trust_cluster_from_an_older_release_is_closed_by_db_start(tmp_path_factory):
    paths = database.EmbeddedPaths(tmp_path_factory.mktemp("legacy"))
    make_trust_cluster(paths)
    try:
        writer_url = database.start_embedded(paths)  # the upgrade, on the running server
        for role in ROLES:
            with pytest.raises(psycopg.OperationalError, match="password"):
                psycopg.connect(trust_url(paths, role), connect_timeout=5).close()
        assert stat.S_IMODE(paths.run.stat().st_mode) == 0o700
        assert stat.S_IMODE(paths.home.stat().st_mode) == 0o700
        with psycopg.connect(writer_url, autocommit=True) as conn:
            # what the superuser built before is the writer's now: dbt can rebuild it
            conn.execute(
                "create or replace function marts.legacy_fn() returns int "
                "language sql as 'select 2'"
            )
            conn.execute("insert into marts.legacy_built values (2)")
            conn.execute("create table marts.after_upgrade as select 3 as x")
            conn.execute(
                "insert into raw.github_objects (repo_id, repo, object_type, "
                "object_id, payload, payload_hash, pass_name) values "
                "(1, 'o/n', 'issue', 1, '{}', 'h', 't')"
            )
        with psycopg.connect(database.reader_url(writer_url, env={})) as conn:
            assert conn.execute("select count(*) from marts.legacy_built").fetchone() == (2,)
            assert conn.execute("select x from marts.after_upgrade").fetchone() == (3,)
        # and it restarts under the new rules
        assert database.stop_embedded(paths)
        database.start_embedded(paths)
        with psycopg.connect(paths.writer_url()) as conn:
            assert conn.execute("select current_user").fetchone() == ("relore_writer",)
    finally:
        database.stop_embedded(paths)
