"""relored doctor on a real Postgres: each FAIL/WARN it exists to raise, and silence when healthy."""

from __future__ import annotations

import io
import json
import stat

import psycopg
import pytest
from fixtures import daemon as daemons
from fixtures.legacy_cluster import make_trust_cluster

from relore.extract import checkpoints
from relore.extract.github_client import GitHubClient, GitHubError
from relore.operate import database, doctor, migrations

REPO_ID, REPO = 4242, "acme/widgets"


def _seed_healthy(url: str) -> None:
    """A repository extracted an hour ago, built, with authority run."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "insert into ops.repos (repo_id, full_name, owner_login, owner_type) "
            "values (%s, %s, 'acme', 'Organization')",
            (REPO_ID, REPO),
        )
        for pass_name in ("issues", "issue_comments", "review_comments"):
            conn.execute(
                "insert into ops.pass_runs (repo_id, pass_name, started_at, finished_at, "
                "status, rows_written) values (%s, %s, now() - interval '61 minutes', "
                "now() - interval '1 hour', 'ok', 3)",
                (REPO_ID, pass_name),
            )
            conn.execute(
                "insert into ops.checkpoints (repo_id, pass_name, high_water) "
                "values (%s, %s, now() - interval '2 hours')",
                (REPO_ID, pass_name),
            )
        conn.execute(
            "insert into raw.github_objects (repo_id, repo, object_type, object_id, "
            "thread_number, payload, payload_hash, pass_name, loaded_at) values "
            "(%s, %s, 'issue', 1, 1, '{\"author_association\": \"MEMBER\"}', 'h1', 'issues', "
            "now() - interval '1 hour')",
            (REPO_ID, REPO),
        )
        conn.execute(
            "insert into ops.collaborator_permissions (repo_id, login, permission) "
            "values (%s, 'maintainer', 'write')",
            (REPO_ID,),
        )
        # What dbt would have built: only the columns the doctor reads.
        conn.execute(
            "create table marts.documents as select %s::bigint as repo_id, "
            "now() - interval '1 hour' as source_loaded_at",
            (REPO_ID,),
        )
        conn.execute("grant select on marts.documents to relore_reader")


def _run(url: str) -> tuple[int, dict[str, doctor.Check], str]:
    out = io.StringIO()
    checks = doctor.run_checks(url, env={})
    doctor.render(checks, out)
    return doctor.exit_code(checks), {c.name: c for c in checks}, out.getvalue()


def test_healthy_database_is_all_ok_and_exits_zero(db_url):
    _seed_healthy(db_url)
    code, checks, text = _run(db_url)
    assert code == 0, text
    assert {c.level for c in checks.values()} == {doctor.OK}
    assert {"database", "migrations", "reader", f"extract {REPO}", f"build {REPO}"} <= set(checks)
    assert text.splitlines()[0].startswith("OK   database: ")
    assert text.rstrip().endswith("0 warn, 0 fail")


def test_json_output_names_every_check_and_the_exit_code(db_url):
    _seed_healthy(db_url)
    out = io.StringIO()
    code = doctor.main(env={"RELORE_DATABASE_URL": db_url}, out=out, as_json=True)
    payload = json.loads(out.getvalue())
    assert code == payload["exit_code"] == 0
    assert payload["status"] == "ok"
    assert all(set(c) == {"level", "name", "detail", "action"} for c in payload["checks"])


def test_wedged_pass_fails_naming_the_pass_and_its_error(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        for _ in range(3):
            conn.execute(
                "insert into ops.pass_runs (repo_id, pass_name, finished_at, status, "
                "rows_written, error) values (%s, 'review_comments', now(), 'failed', 0, "
                "'HTTP 502 on /pulls/comments?page=7')",
                (REPO_ID,),
            )
    code, checks, text = _run(db_url)
    assert code == 2, text
    wedged = checks[f"pass {REPO} review_comments"]
    assert wedged.level == doctor.FAIL
    assert "wedged" in wedged.detail and "last 3 runs" in wedged.detail
    assert "HTTP 502" in wedged.detail and "high-water stuck at" in wedged.detail


def test_one_failed_run_is_a_warning_not_a_wedge(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "insert into ops.pass_runs (repo_id, pass_name, finished_at, status, rows_written,"
            " error) values (%s, 'issues', now(), 'failed', 0, 'timeout')",
            (REPO_ID,),
        )
    code, checks, _ = _run(db_url)
    assert code == 1
    assert checks[f"pass {REPO} issues"].level == doctor.WARN


def test_migrations_behind_fails_and_says_run_migrate(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("delete from ops.schema_migrations where version = %s", (migrations.LATEST,))
    code, checks, text = _run(db_url)
    assert code == 2, text
    assert checks["migrations"].level == doctor.FAIL
    assert "relored migrate" in checks["migrations"].action
    assert f"FAIL migrations: 1 step(s) not applied ({migrations.LATEST})" in text


def test_never_migrated_database_fails_without_crashing(pg_cluster):
    with psycopg.connect(pg_cluster.url(database="postgres"), autocommit=True) as conn:
        conn.execute("drop database if exists doctor_bare with (force)")
        conn.execute("create database doctor_bare")
    code, checks, _ = _run(pg_cluster.url(database="doctor_bare"))
    assert code == 2
    assert checks["migrations"].level == doctor.FAIL
    assert set(checks) == {"database", "auth", "permissions", "migrations"}


def test_reader_granted_insert_fails_the_reader_check(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("grant insert on marts.documents to relore_reader")
    code, checks, text = _run(db_url)
    assert code == 2, text
    reader = checks["reader"]
    assert reader.level == doctor.FAIL
    assert "can write marts.documents" in reader.detail
    assert "revoke" in reader.action
    with psycopg.connect(db_url) as conn:  # the probe was rolled back
        assert conn.execute("select count(*) from marts.documents").fetchone()[0] == 1


def test_reader_that_can_read_raw_fails(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("grant usage on schema raw to relore_reader")
        conn.execute("grant select on raw.github_objects to relore_reader")
    _, checks, _ = _run(db_url)
    assert checks["reader"].level == doctor.FAIL
    assert "raw.github_objects" in checks["reader"].detail


def test_stale_extract_unbuilt_rows_and_missing_authority_are_reported(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("update ops.pass_runs set finished_at = now() - interval '8 days'")
        conn.execute("delete from ops.collaborator_permissions")
        conn.execute(
            "insert into raw.github_objects (repo_id, repo, object_type, object_id, "
            "thread_number, payload, payload_hash, pass_name) values "
            "(%s, %s, 'issue_comment', 9, 1, '{}', 'h9', 'issue_comments')",
            (REPO_ID, REPO),
        )
    code, checks, text = _run(db_url)
    assert code == 2, text
    assert checks[f"extract {REPO}"].level == doctor.FAIL
    assert checks[f"build {REPO}"].level == doctor.WARN
    assert "dbt build" in checks[f"build {REPO}"].action
    assert checks[f"authority {REPO}"].level == doctor.WARN
    assert f"relored extract authority --repo {REPO}" in checks[f"authority {REPO}"].action


def test_a_failed_latest_extract_is_reported_with_its_error_and_age(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "insert into ops.pass_runs (repo_id, pass_name, started_at, finished_at, status, "
            "error) values (%s, 'poll', now() - interval '20 minutes', now() - interval '10 minutes', "
            "'failed', 'GitHub answered 502 for /issues')",
            (REPO_ID,),
        )
    _, checks, text = _run(db_url)
    check = checks[f"extract {REPO}"]
    assert check.level == doctor.WARN, text
    assert "the latest run (poll, 10m ago) failed: GitHub answered 502 for /issues" in text


def test_unreachable_database_is_a_fail_not_a_traceback(tmp_path):
    url = f"postgresql://postgres@/relore?host={tmp_path}"
    out = io.StringIO()
    code = doctor.main(env={"RELORE_DATABASE_URL": url}, out=out)
    assert code == 2
    assert out.getvalue().startswith("FAIL database: cannot connect")


def test_marts_never_built_is_a_warning_to_run_dbt_build(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("drop table marts.documents")
    code, checks, _ = _run(db_url)
    assert code == 1
    assert checks["build"].level == doctor.WARN
    assert "dbt build" in checks["build"].action


@pytest.fixture(scope="module")
def trust_cluster(tmp_path_factory):
    """A cluster an older release made: trust auth, 0755 directories, no passwords file."""
    paths = database.EmbeddedPaths(tmp_path_factory.mktemp("trust"))
    url = make_trust_cluster(paths)
    yield paths, url
    database.stop_embedded(paths)


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_server_that_lets_roles_in_without_a_password_fails_the_auth_check(trust_cluster):
    _, url = trust_cluster
    code, checks, text = _run(url)
    assert code == 2, text
    auth = checks["auth"]
    assert auth.level == doctor.FAIL
    assert "relore_reader" in auth.detail and "postgres" in auth.detail
    assert "trust" in auth.detail  # read from pg_hba_file_rules: this URL is a superuser's
    assert "relored db start" in auth.action


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_open_socket_dir_and_missing_passwords_fail_the_permissions_check(trust_cluster):
    _, url = trust_cluster
    _, checks, _ = _run(url)
    permissions = checks["permissions"]
    assert permissions.level == doctor.FAIL
    assert "run" in permissions.detail and "0755" in permissions.detail
    assert "pgpass" in permissions.detail


def test_the_embedded_server_relore_made_passes_auth_and_permissions(db_url):
    _seed_healthy(db_url)
    _, checks, text = _run(db_url)
    assert checks["auth"].level == doctor.OK, text
    assert checks["permissions"].level == doctor.OK, text


def test_loosened_password_file_and_data_dir_fail_the_permissions_check(pg_cluster, db_url):
    loosened = {pg_cluster.passwords: 0o644, pg_cluster.data: 0o750}
    before = {p: stat.S_IMODE(p.stat().st_mode) for p in loosened}
    try:
        for path, mode in loosened.items():
            path.chmod(mode)
        code, checks, text = _run(db_url)
    finally:
        for path, mode in before.items():
            path.chmod(mode)
    assert code == 2, text
    detail = checks["permissions"].detail
    assert f"{pg_cluster.passwords} is 0644" in detail
    assert f"{pg_cluster.data} is 0750" in detail


def _docs_superuser_statements() -> str:
    """The SQL block docs/operations.md gives a superuser of your own server."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "operations.md").read_text()
    section = text[text.index("**The reader writes nothing**") :]
    block = section[section.index("```sql\n") + len("```sql\n") :]
    return block[: block.index("```")].replace("\nto relore;", "\nto relore_writer;")


@pytest.fixture
def own_server_db(pg_cluster):
    """A database made as docs/operations.md says for your own server (a superuser creates
    it, owned by the writer; nothing of the embedded server's own set-up), migrated by the
    writer, who is not a superuser."""
    name = "doctor_own_server"
    with psycopg.connect(pg_cluster.url(database="template1"), autocommit=True) as conn:
        conn.execute(f"drop database if exists {name} with (force)")
        conn.execute(f"create database {name} owner relore_writer")
    url = pg_cluster.writer_url(name)
    with psycopg.connect(url, autocommit=True) as conn:
        migrations.migrate(conn)
    yield url
    with psycopg.connect(pg_cluster.url(database="template1"), autocommit=True) as conn:
        conn.execute(f"drop database if exists {name} with (force)")


def test_reader_that_can_store_large_objects_fails_until_a_superuser_revokes_them(
    own_server_db, pg_cluster
):
    """On your own server the writer's migrate closes TEMPORARY but cannot revoke the
    bootstrap superuser's functions: the doctor tries them as the reader and says so, and
    the statements the docs give a superuser close them."""
    from fixtures import reader_probes

    _seed_healthy(own_server_db)
    _, checks, text = _run(own_server_db)
    reader = checks["reader"]
    assert reader.level == doctor.FAIL, text
    assert "can store large objects, advisory locks with read-only turned off" in reader.detail
    assert "temporary" not in reader.detail  # the writer's migrate revoked that
    assert "docs/operations.md" in reader.action
    with psycopg.connect(pg_cluster.url(database="doctor_own_server"), autocommit=True) as conn:
        conn.execute(_docs_superuser_statements())
    _, checks, text = _run(own_server_db)
    assert checks["reader"].level == doctor.OK, text
    assert reader_probes.not_refused(database.reader_url(own_server_db, env={})) == {}
    with psycopg.connect(own_server_db, autocommit=True) as conn:  # the writer still locks
        assert migrations.migrate(conn) == []
        conn.execute("select pg_advisory_xact_lock(1)")


def test_reader_that_can_create_temporary_tables_fails_the_reader_check(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        (name,) = conn.execute("select current_database()").fetchone()
        conn.execute(f'grant temporary on database "{name}" to public')
    _, checks, text = _run(db_url)
    assert checks["reader"].level == doctor.FAIL, text
    assert "can store temporary tables with read-only turned off" in checks["reader"].detail
    assert "relored migrate" in checks["reader"].action


def _run_failing_to_connect(db_url: str, api_url: str, pass_name: str) -> None:
    """A pass's run recorded as the runner records it, its request sent by the real client to
    ``api_url``, where nothing listens (the address a previous demo's fake GitHub had)."""
    with (
        psycopg.connect(db_url, autocommit=True) as conn,
        GitHubClient(api_url=api_url, max_attempts=2, backoff=0, env={}) as client,
        pytest.raises(GitHubError, match="ConnectError"),
        checkpoints.recorded_run(conn, REPO_ID, pass_name, client.stats, lambda: (0, 0)),
    ):
        client.get_page(f"repos/{REPO}/issues", params={"state": "all", "per_page": 100})


def test_a_pass_that_could_not_connect_to_the_api_names_the_address_not_the_next_run(db_url):
    """The second `make demo` failed its deletions pass on the previous run's fake GitHub port,
    and the doctor advised waiting for the next run, which would fail the same way."""
    _seed_healthy(db_url)
    gone = f"http://127.0.0.1:{daemons.free_port()}"  # nothing listens there
    _run_failing_to_connect(db_url, gone, "deletions")
    now = f"http://127.0.0.1:{daemons.free_port()}"  # where the API answers now
    checks = {c.name: c for c in doctor.run_checks(db_url, env={"RELORE_GITHUB_API_URL": now})}
    failed = checks[f"pass {REPO} deletions"]
    assert failed.level == doctor.WARN, failed
    assert "next scheduled run" not in failed.action
    assert gone in failed.action and now in failed.action, failed.action
    assert "RELORE_GITHUB_API_URL" in failed.action
    assert "RELORE_GITHUB_API_URL" in checks[f"extract {REPO}"].action

    # the same address configured here: nothing answers at it
    checks = {c.name: c for c in doctor.run_checks(db_url, env={"RELORE_GITHUB_API_URL": gone})}
    assert "nothing answered at " + gone in checks[f"pass {REPO} deletions"].action

    # failing again is a wedge; rerunning on the same address still will not help
    _run_failing_to_connect(db_url, gone, "deletions")
    checks = {c.name: c for c in doctor.run_checks(db_url, env={"RELORE_GITHUB_API_URL": now})}
    wedged = checks[f"pass {REPO} deletions"]
    assert wedged.level == doctor.FAIL, wedged
    assert "a page GitHub cannot serve" not in wedged.action
    assert gone in wedged.action and "RELORE_GITHUB_API_URL" in wedged.action


def test_a_pass_failing_on_an_http_error_keeps_the_retry_advice(db_url):
    _seed_healthy(db_url)
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute(
            "insert into ops.pass_runs (repo_id, pass_name, finished_at, status, rows_written,"
            " error) values (%s, 'issues', now(), 'failed', 0, "
            "'gave up after 6 attempts, last: HTTP 502 (http://127.0.0.1:1/repos/acme/widgets/issues)')",
            (REPO_ID,),
        )
    _, checks, _ = _run(db_url)
    assert "the next scheduled run retries" in checks[f"pass {REPO} issues"].action
