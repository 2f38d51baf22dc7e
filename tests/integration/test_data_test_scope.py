"""Data tests on stamped marts read only what was written since they last passed.

At 50,000 threads, 268 generic tests re-read whole marts on every build: 39 s of a 46 s
build with nothing new, 22 s on documents alone. A test on a mart stamped with written_at
now reads rows stamped after its own mark (macros/test_scope.sql); these tests check that
what it skips was read before, that what a build writes is read, and that a failure keeps
failing until it is mended.
"""

from __future__ import annotations

from contextlib import contextmanager

import psycopg
import pytest
from fixtures import corpus
from fixtures import world as worlds

pytestmark = pytest.mark.slow  # dbt builds of its own: make test-fast skips it

REPO = "acme/tested"
WORLD_PART = worlds.Part(REPO, corpus=lambda: corpus.generate(seed=9, threads=12, repo=REPO))
TIER_TEST = "accepted_values_documents_trust_tier"
THREAD_KEY_TEST = "unique_combination_of_columns_threads"


@pytest.fixture(scope="module")
def built(world_copy, indexed_world, tmp_path_factory):
    """A copy of the shared world, built and tested once: the tests below write marts."""
    repo_id = indexed_world.corpora[REPO].repo_id
    return {"url": world_copy, "build": tmp_path_factory.mktemp("dbt"), "repo_id": repo_id}


def _marks(url: str) -> dict[str, object]:
    with psycopg.connect(url) as conn:
        return dict(conn.execute("select test_id, marked_to from relore_build.test_marks"))


def _one_document(url: str, repo_id: int) -> str:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select min(document_id) from marts.documents where repo_id = %s", (repo_id,)
        ).fetchone()[0]


@contextmanager
def _stranger_tier(url: str, repo_id: int, *, stamp: bool):
    """One document's trust tier set by hand to a value no test accepts, then put back;
    ``stamp``: its written_at moved as a build writing it would move it."""
    document_id = _one_document(url, repo_id)
    update = (
        "update marts.documents as d set trust_tier = %s,"
        " written_at = case when %s then now() else d.written_at end"
        " from marts.documents as before"
        " where d.repo_id = %s and d.document_id = %s"
        " and before.repo_id = d.repo_id and before.document_id = d.document_id"
        " returning before.trust_tier"
    )
    with psycopg.connect(url) as conn:
        (before,) = conn.execute(update, ("stranger", stamp, repo_id, document_id)).fetchone()
    try:
        yield
    finally:
        with psycopg.connect(url) as conn:
            conn.execute(update, (before, stamp, repo_id, document_id))


def test_a_passing_build_marks_each_scoped_test_at_the_newest_row_it_read(built, run_dbt):
    url = built["url"]
    run_dbt(url, built["build"], "build", "--select", "documents", "threads", "thread_files",
            "stg_github__issues")  # fmt: skip
    marks = _marks(url)
    with psycopg.connect(url) as conn:
        newest = conn.execute("select max(written_at) from marts.documents").fetchone()[0]
    tier = [mark for test, mark in marks.items() if TIER_TEST in test]
    assert tier == [newest], "the trust-tier test passed but its mark is not the newest row"
    assert any(THREAD_KEY_TEST in test for test in marks), "the threads key test has no mark"
    signal = [test for test in marks if "not_null_columns_thread_files" in test]
    assert signal, "signal marts are stamped"
    unstamped = [test for test in marks if "_stg_github__" in test]
    assert not unstamped, "a test on a table without written_at was given a mark"


def test_a_bad_row_a_build_wrote_fails_every_build_until_mended(built, run_dbt):
    url, repo_id = built["url"], built["repo_id"]
    with _stranger_tier(url, repo_id, stamp=True):
        for _ in range(2):  # a failing test keeps its mark: the next build reads it again
            with pytest.raises(AssertionError, match=TIER_TEST):
                run_dbt(url, built["build"], "test", "--select", "documents")
    run_dbt(url, built["build"], "test", "--select", "documents")


def test_rows_a_passing_test_read_are_not_read_again_unless_asked(built, run_dbt):
    """A row changed by hand without a new stamp is older than the mark: a build skips it,
    the nightly full run (`relore_tests: full`) and a test with no mark read it."""
    url, repo_id = built["url"], built["repo_id"]
    run_dbt(url, built["build"], "test", "--select", "documents")
    with _stranger_tier(url, repo_id, stamp=False):
        run_dbt(url, built["build"], "test", "--select", "documents")
        with pytest.raises(AssertionError, match=TIER_TEST):
            run_dbt(
                url, built["build"], "test", "--select", "documents",
                "--vars", "{relore_tests: full}",
            )  # fmt: skip
        with psycopg.connect(url) as conn:
            conn.execute("delete from relore_build.test_marks where test_id like %s",
                         (f"%{TIER_TEST}%",))  # fmt: skip
        with pytest.raises(AssertionError, match=TIER_TEST):
            run_dbt(url, built["build"], "test", "--select", "documents")
    run_dbt(url, built["build"], "test", "--select", "documents")


def test_a_new_row_repeating_an_old_rows_key_fails_the_key_test(built, run_dbt):
    """The key test reads every row whose key a new row has, not only the new rows."""
    url, repo_id = built["url"], built["repo_id"]
    run_dbt(url, built["build"], "test", "--select", "threads")
    with psycopg.connect(url) as conn:
        unique = conn.execute(
            "select indexname from pg_indexes where schemaname = 'marts'"
            " and tablename = 'threads' and indexdef like 'CREATE UNIQUE%%'"
        ).fetchone()[0]
        conn.execute(f'drop index marts."{unique}"')  # Postgres would refuse the repeat
        conn.execute(
            "create temporary table repeat as select * from marts.threads"
            " where repo_id = %s order by number limit 1",
            (repo_id,),
        )
        conn.execute("update repeat set written_at = clock_timestamp()")
        conn.execute("insert into marts.threads select * from repeat")
        stamp = conn.execute("select written_at from repeat").fetchone()[0]
    try:
        with pytest.raises(AssertionError, match=THREAD_KEY_TEST):
            run_dbt(url, built["build"], "test", "--select", "threads")
    finally:
        with psycopg.connect(url) as conn:
            conn.execute(
                "delete from marts.threads where repo_id = %s and written_at = %s",
                (repo_id, stamp),
            )
            conn.execute(f'create unique index "{unique}" on marts.threads (repo_id, number)')
    run_dbt(url, built["build"], "test", "--select", "threads")


def test_a_null_in_any_column_the_folded_test_names_fails_it_and_says_which(built, run_dbt):
    """One not_null_columns test per model replaced its column tests: a null in any named
    column still fails the build, its failures count the nulls, and its rows name the
    columns (two columns nulled in one stamped row: two failures, both columns named)."""
    url, repo_id = built["url"], built["repo_id"]
    run_dbt(url, built["build"], "test", "--select", "documents")
    document_id = _one_document(url, repo_id)
    key = "where repo_id = %s and document_id = %s"
    with psycopg.connect(url) as conn:
        before = conn.execute(
            f"select content_hash, source_loaded_at from marts.documents {key}",
            (repo_id, document_id),
        ).fetchone()
        conn.execute(
            "update marts.documents set content_hash = null, source_loaded_at = null,"
            f" written_at = clock_timestamp() {key}",
            (repo_id, document_id),
        )
    try:
        with pytest.raises(AssertionError, match=r"not_null_columns_documents[\s\S]*Got 2 result"):
            run_dbt(url, built["build"], "test", "--select", "documents")
        compiled = next(
            (built["build"] / "target" / "compiled").rglob("not_null_columns_documents*")
        )
        with psycopg.connect(url) as conn:
            named = dict(conn.execute(compiled.read_text()).fetchall())
        assert named == {"content_hash": 1, "source_loaded_at": 1}, named
    finally:
        with psycopg.connect(url) as conn:
            conn.execute(
                "update marts.documents set content_hash = %s, source_loaded_at = %s,"
                f" written_at = clock_timestamp() {key}",
                (*before, repo_id, document_id),
            )
    run_dbt(url, built["build"], "test", "--select", "documents")
