"""The database lifecycle, migrations, the reader role and the landing writer, on real Postgres."""

from __future__ import annotations

import io
import json

import psycopg
import pytest
from fixtures import reader_probes

from relore.extract.landing import RawObject, Repo, land
from relore.operate import cli, database, migrations
from relore.operate.exits import ExitStatus

REPO = Repo(repo_id=4242, full_name="acme/widgets")


def _raw_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("select count(*) from raw.github_objects").fetchone()[0]


def test_migrations_rerun_applies_nothing_and_records_every_step(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        assert migrations.migrate(conn) == []
        assert migrations.applied_versions(conn) == [v for v, _, _ in migrations.STEPS]


def test_reader_role_cannot_insert_update_or_read_raw(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("create table marts.probe (x int)")
        conn.execute("insert into marts.probe values (1)")
    reader = database.reader_url(db_url, env={})
    assert "relore_reader:" in reader  # with the reader's own password
    with psycopg.connect(reader, autocommit=True) as conn:
        assert conn.execute("select x from marts.probe").fetchone() == (1,)
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            conn.execute("insert into marts.probe values (2)")
        conn.execute("set default_transaction_read_only = off")  # a hostile session tries
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("insert into marts.probe values (2)")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select count(*) from raw.github_objects")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("select count(*) from ops.repos")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("create table marts.evil (x int)")


def test_reader_with_read_only_turned_off_can_write_nothing_anywhere(db_url):
    """Read-only is the reader's default, which it may turn off: then PUBLIC's TEMPORARY on
    the database, the large-object functions and the advisory locks were its to use (it
    stored 9 MB of large objects). Every write is refused, and it still reads what it
    serves."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("create table marts.probe (x int)")
        conn.execute("insert into marts.probe values (1)")
        conn.execute("create table semantic.probe (x int)")
    reader = database.reader_url(db_url, env={})
    found = reader_probes.not_refused(reader)
    assert found == {}, found
    with psycopg.connect(reader) as conn:
        assert conn.execute("select x from marts.probe").fetchone() == (1,)
        assert conn.execute("select count(*) from semantic.probe").fetchone() == (0,)


def test_reader_cannot_connect_to_the_clusters_other_databases(pg_cluster, db_url):
    """The embedded cluster's ``postgres`` and ``template1`` gave every role CONNECT and
    TEMPORARY, and their large-object functions to all: the reader could store there what
    it cannot store in relore's database (and template1's would be in every new database)."""
    for name in ("postgres", "template1"):
        url = pg_cluster.reader_url(name)
        with pytest.raises(psycopg.OperationalError, match="permission denied"):
            psycopg.connect(url).close()
    # the writer still reaches the cluster's maintenance database; the superuser every one
    psycopg.connect(pg_cluster.writer_url("postgres")).close()
    psycopg.connect(pg_cluster.url(database="template1")).close()


def test_landing_the_same_payloads_twice_writes_zero_rows_the_second_time(db_url):
    objects = [
        RawObject("issue", 1, 1, {"id": 1, "number": 1, "title": "a", "labels": []}),
        RawObject("issue_comment", 10, 1, {"id": 10, "body": "x", "reactions": {"+1": 0}}),
    ]
    with psycopg.connect(db_url, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur:
            assert land(cur, REPO, "test", objects) == 2
        with conn.transaction(), conn.cursor() as cur:
            assert land(cur, REPO, "test", objects) == 0
        # key order is not a change: the hash is over canonical JSON
        reordered = [RawObject("issue", 1, 1, {"labels": [], "title": "a", "number": 1, "id": 1})]
        with conn.transaction(), conn.cursor() as cur:
            assert land(cur, REPO, "test", reordered) == 0
    assert _raw_rows(db_url) == 2


def test_changed_payload_is_a_new_version_and_deletion_a_tombstone(db_url):
    with psycopg.connect(db_url, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur:
            land(cur, REPO, "t", [RawObject("issue_comment", 5, 2, {"id": 5, "body": "v1"})])
            land(cur, REPO, "t", [RawObject("issue_comment", 5, 2, {"id": 5, "body": "v2"})])
            land(cur, REPO, "t", [RawObject("issue_comment", 5, 2, None)])
            land(cur, REPO, "t", [RawObject("issue_comment", 5, 2, None)])  # already gone
            land(cur, REPO, "t", [RawObject("issue_comment", 6, 2, None)])  # never seen
        rows = conn.execute(
            "select object_id, payload->>'body', is_deleted from raw.github_objects order by row_id"
        ).fetchall()
    assert rows == [(5, "v1", False), (5, "v2", False), (5, None, True)]


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_relored_db_cli_starts_reports_and_stops_an_embedded_server(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    env = {"RELORE_HOME": str(home), "PGPASSFILE": str(home.parent / "pgpass")}

    def relored(*argv: str) -> dict:
        out = io.StringIO()
        assert cli.main([*argv, "--json"], env=env, out=out, err=io.StringIO()) == 0
        return json.loads(out.getvalue())

    assert relored("db", "status")["state"] == "absent"
    started = relored("db", "start")
    assert started["state"] == "running"
    assert relored("db", "start")["state"] == "running"  # idempotent
    assert ":***@" in started["url"]  # the report never prints a password
    url = io.StringIO()
    assert cli.main(["db", "url"], env=env, out=url) == 0
    with psycopg.connect(url.getvalue().strip()) as conn:
        assert migrations.applied_versions(conn) == [v for v, _, _ in migrations.STEPS]
    assert relored("db", "stop")["state"] == "stopped"
    assert relored("db", "status")["state"] == "stopped"


def test_extract_without_a_running_database_says_how_to_start_it(tmp_path):
    err = io.StringIO()
    code = cli.main(
        ["extract", "--repo", "o/n"], env={"RELORE_HOME": str(tmp_path)}, out=io.StringIO(), err=err
    )
    assert code == ExitStatus.ERROR
    assert "relored db start" in err.getvalue()


def test_payload_with_nul_or_lone_surrogate_lands_scrubbed_and_is_quarantined_exactly(db_url):
    bad = {"id": 77, "body": "before\x00after \ud800 end", "user": {"login": "x"}}
    good = {"id": 78, "body": "fine"}
    with psycopg.connect(db_url, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur:
            written = land(
                cur,
                REPO,
                "t",
                [RawObject("issue_comment", 77, 3, bad), RawObject("issue_comment", 78, 3, good)],
            )
        assert written == 2  # nothing else in the page is lost
        body = conn.execute(
            "select payload->>'body' from raw.github_objects where object_id = 77"
        ).fetchone()[0]
        assert body == "before\ufffdafter \ufffd end"
        reason, exact = conn.execute(
            "select reason, body from ops.quarantine where object_id = 77"
        ).fetchone()
        assert "NUL character" in reason and "lone surrogate" in reason
        assert "\\u0000" in exact and "\\ud800" in exact
        with conn.transaction(), conn.cursor() as cur:  # re-landing the same bad payload
            assert land(cur, REPO, "t", [RawObject("issue_comment", 77, 3, bad)]) == 0
        assert conn.execute("select count(*) from ops.quarantine").fetchone()[0] == 1


def test_ten_megabyte_comment_lands_whole(db_url):
    body = "line of a very long log\n" * 450_000  # ~10.8 MB
    with psycopg.connect(db_url, autocommit=True) as conn:
        with conn.transaction(), conn.cursor() as cur:
            assert (
                land(cur, REPO, "t", [RawObject("issue_comment", 9, 1, {"id": 9, "body": body})])
                == 1
            )
        size = conn.execute(
            "select length(payload->>'body') from raw.github_objects where object_id = 9"
        ).fetchone()[0]
    assert size == len(body)
