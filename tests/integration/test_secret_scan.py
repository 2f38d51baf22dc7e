"""The every-column secret scan reads what changed since the last scan that passed.

Reading every mart row through the whole redaction catalog on every build cost minutes at a
million documents; rows a passing scan already read are skipped (by transaction id), while
anything written since, by any model or by hand, is read.
"""

from __future__ import annotations

import psycopg
import pytest
from fixtures import corpus, corpus_payloads, function_calls, indexed
from fixtures import world as worlds
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.slow  # dbt builds of its own: make test-fast skips it

SCAN = "assert_no_secret_survives_in_any_mart_text"
LEAK = "hf_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"  # a Hugging Face token's shape


REPO = "acme/scanned"
WORLD_PART = worlds.Part(REPO, corpus=lambda: corpus.generate(seed=8, threads=12, repo=REPO))


@pytest.fixture(scope="module")
def built(world_copy, indexed_world, tmp_path_factory):
    """A copy of the shared world (its build passed the scan): the tests below write marts."""
    repo_id = indexed_world.corpora[REPO].repo_id
    return {"url": world_copy, "build": tmp_path_factory.mktemp("dbt"), "repo_id": repo_id}


def _since(url: str):
    """The mark a scan starting now would read from (None: it reads everything)."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select max(coalesce(scanned_to, started_xid)) from relore_build.secret_scans"
            " where passed"
        ).fetchone()[0]


def _leaks(url: str, since) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select coalesce(sum(leaks), 0) from marts.relore_secret_leaks('marts', %s)",
            (since,),
        ).fetchone()[0]


def test_a_passing_build_marks_where_the_next_scan_starts(built, run_dbt):
    first = _since(built["url"])
    assert first is not None, "the first build's scan passed but left no mark"
    run_dbt(built["url"], built["build"], "build")
    assert int(str(_since(built["url"]))) > int(str(first))


def test_a_passing_build_leaves_nothing_it_wrote_for_the_next_scan(built, run_dbt):
    """The mark was once the build's start: the next scan re-read every row the build wrote
    (after a full build at 50,000 threads, 812 s of a 1% build)."""
    url = built["url"]
    with psycopg.connect(url) as conn:  # a new comment: something for this build to write
        number = conn.execute(
            "select min(number) from marts.threads where repo_id = %s", (built["repo_id"],)
        ).fetchone()[0]
        payload = corpus_payloads.comment(
            REPO, comment_id=880_001, number=number, is_pr=False, association="NONE",
            author={"login": "late", "id": 88, "type": "User"}, body="one more data point",
            created=1_780_000_000, updated=1_780_000_000, reaction_counts={},
        )  # fmt: skip
        indexed.land_raw(conn, REPO, built["repo_id"], "issue_comment", 880_001, number, payload)
    run_dbt(url, built["build"], "build")
    mark = _since(url)
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "select table_name from information_schema.tables"
            " where table_schema = 'marts' and table_type = 'BASE TABLE'"
        ).fetchall()
        unread = {
            name: conn.execute(
                f"select count(*) from marts.{name} where age(xmin) <= age(%s::xid)",
                (str(mark),),
            ).fetchone()[0]
            for (name,) in tables
        }
        written = conn.execute(
            "select count(*) from marts.documents where source_document_id = 'issue_comment:880001'"
        ).fetchone()[0]
    assert written == 1, "the build wrote nothing: the mark was not put to the test"
    assert {name: n for name, n in unread.items() if n} == {}


def test_a_scan_from_a_mark_still_redacts_in_parallel_workers(built, pg_cluster):
    """Every build after the first scans from a mark. Its filter once used age(xmin), which
    Postgres marks parallel-restricted: the rows reached the leader before the count's
    redaction, and the scan of a full refresh at 1.2M documents redacted in one process
    (268 s; 142 s in parallel). With parallel plans made free and the leader kept out of
    the scan, its relore_redact calls (track_functions counts the leader's only) must be
    the workers'."""
    dbname = psycopg.conninfo.conninfo_to_dict(built["url"])["dbname"]
    with psycopg.connect(pg_cluster.url(database=dbname)) as conn:
        mark = conn.execute("select pg_current_xact_id()").fetchone()[0]
        conn.commit()
        conn.execute("create schema scan_parallel")
        conn.execute(
            "create table scan_parallel.notes as select 'note ' || n as a"
            " from generate_series(1, 20000) as n"
        )
        conn.commit()
        for setting in (
            "parallel_setup_cost = 0",
            "parallel_tuple_cost = 0",
            "min_parallel_table_scan_size = 0",
            "max_parallel_workers_per_gather = 2",
            "parallel_leader_participation = off",
            "track_functions = 'pl'",
        ):
            conn.execute(f"set local {setting}")
        before = function_calls.calls(conn)
        leaks = conn.execute(
            "select coalesce(sum(leaks), 0) from marts.relore_secret_leaks('scan_parallel', %s)",
            (mark,),
        ).fetchone()[0]
        in_leader = function_calls.calls(conn) - before
    assert leaks == 0
    assert in_leader < 20000, "every row was redacted by the leader: the scan ran in one process"


def test_a_row_written_after_the_mark_is_scanned_and_fails_the_build(built, run_dbt):
    url = built["url"]
    with psycopg.connect(url) as conn:
        repo_id = built["repo_id"]  # the copy holds other repositories' threads too
        number = conn.execute(
            "select min(number) from marts.threads where repo_id = %s", (repo_id,)
        ).fetchone()[0]
        conn.execute(
            "update marts.threads set title = %s where number = %s and repo_id = %s",
            (f"leak {LEAK}", number, repo_id),
        )
    try:
        with pytest.raises(AssertionError, match=SCAN):
            run_dbt(url, built["build"], "test", "--select", SCAN)
        # the scan reading only rows since the mark still finds it
        assert _leaks(url, _since(url)) == 1
    finally:
        with psycopg.connect(url) as conn:
            conn.execute(
                "update marts.threads set title = 'mended' where number = %s and repo_id = %s",
                (number, repo_id),
            )
    run_dbt(url, built["build"], "test", "--select", SCAN)


def test_rows_older_than_the_mark_are_not_read_again_unless_asked(built, run_dbt):
    url = built["url"]
    with psycopg.connect(url) as conn:
        conn.execute("create table marts.scan_probe (note text)")
        conn.execute("insert into marts.scan_probe values (%s)", (f"old {LEAK}",))
    try:
        # a build whose scan is told the probe row is old: mark it passed, after the row
        with psycopg.connect(url) as conn:
            conn.execute(
                "insert into relore_build.secret_scans (invocation_id, started_xid, catalog, "
                "passed) select 'probe', pg_current_xact_id(), catalog, true "
                "from relore_build.secret_scans order by started_xid desc limit 1"
            )
        assert _leaks(url, _since(url)) == 0
        assert _leaks(url, None) == 1
        with pytest.raises(AssertionError, match=SCAN):
            run_dbt(
                url,
                built["build"],
                "test",
                "--select",
                SCAN,
                "--vars",
                "{relore_secret_scan: full}",
            )
    finally:
        with psycopg.connect(url) as conn:
            conn.execute("drop table marts.scan_probe")
            conn.execute("delete from relore_build.secret_scans where invocation_id = 'probe'")


def test_the_scan_reads_each_table_once_not_once_per_string_column(built):
    """A scan per column read documents twenty times over: 14 s of a 24 s no-op scan at
    1.2M documents. Counted in the scanning transaction itself."""
    with psycopg.connect(built["url"]) as conn:
        scans = (
            "select coalesce(sum(seq_scan + coalesce(idx_scan, 0)), 0)"
            " from pg_stat_xact_user_tables where schemaname = 'marts' and relname = %s"
        )
        columns = conn.execute(
            "select count(*) from information_schema.columns where table_schema = 'marts'"
            " and table_name = 'documents' and data_type in ('text', 'ARRAY', 'jsonb')"
        ).fetchone()[0]
        before = conn.execute(scans, ("documents",)).fetchone()[0]
        leaks = conn.execute(
            "select count(*), coalesce(sum(leaks), 0)"
            " from marts.relore_secret_leaks('marts', null) where table_name = 'documents'"
        ).fetchone()
        after = conn.execute(scans, ("documents",)).fetchone()[0]
    assert columns > 10 and leaks == (columns, 0)
    assert after - before == 1


def test_the_scan_redacts_each_row_once_not_once_per_string_column(built, pg_cluster):
    """relore_redact costs PostgreSQL's regex set-up on every call, whatever the length: a
    call per string column made fourteen a documents row, most of a full build's scan. A
    relation where nothing leaks costs one call a row (its strings joined); one that leaks
    is then read column by column. Measured on a schema of its own, so what the shared
    world holds cannot decide the count."""
    dbname = psycopg.conninfo.conninfo_to_dict(built["url"])["dbname"]
    with psycopg.connect(pg_cluster.url(database=dbname)) as conn:
        conn.execute("create schema scan_count")
        conn.execute(
            "create table scan_count.notes as select 'note ' || n as a, 'issue_comment:' || n"
            " as b, array['x', 'y' || n] as c from generate_series(1, 2000) as n"
        )

        def calls() -> tuple[int, int]:
            conn.execute("set local track_functions = 'pl'")
            before = function_calls.calls(conn)
            leaks = conn.execute(
                "select coalesce(sum(leaks), 0) from marts.relore_secret_leaks('scan_count', null)"
            ).fetchone()[0]
            after = function_calls.calls(conn)
            return leaks, after - before

        assert calls() == (0, 2000)
        conn.execute("update scan_count.notes set a = %s where b = 'issue_comment:7'", (LEAK,))
        assert calls() == (1, 2000 + 3 * 2000)


def test_a_leak_is_counted_in_its_own_column_and_no_other(built):
    """Joined strings only say that a row leaks; the column counts come from a second read,
    column by column, and a secret split across two columns is no leak of either. A value
    equal to its neighbour's (body_text is often body_markdown) is joined once, and still
    counted in both columns."""
    url = built["url"]
    with psycopg.connect(url) as conn:
        conn.execute("create table marts.scan_probe (a text, b text, c text[], d jsonb)")
        conn.execute(
            "insert into marts.scan_probe values (%s, 'plain', array['x', %s], %s),"
            " ('split: hf_', 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z', null, null),"
            " (%s, %s, null, null)",
            (f"one {LEAK}", f"two {LEAK}", Jsonb({"k": [f"three {LEAK}"]}), LEAK, LEAK),
        )
    try:
        with psycopg.connect(url) as conn:
            counts = dict(
                conn.execute(
                    "select column_name, leaks from marts.relore_secret_leaks('marts', null)"
                    " where table_name = 'scan_probe'"
                ).fetchall()
            )
        assert counts == {"a": 2, "b": 1, "c": 1, "d": 1}
    finally:
        with psycopg.connect(url) as conn:
            conn.execute("drop table marts.scan_probe")
