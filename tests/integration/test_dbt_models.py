"""The dbt project over hand-landed raw rows: typed staging, incremental marts that write
nothing when nothing changed and exactly the changed rows otherwise, tombstones kept as
is_deleted, labels following their thread, and the reader seeing marts and nothing else."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from pathlib import Path

import psycopg
import pytest
from psycopg.types.json import Jsonb

from relore.extract import database

FIXTURES = (
    Path(__file__).resolve().parent.parent / "fixtures" / "github" / "github-to-sqlite" / "tests"
)
REPO_ID, REPO = 207052882, "dogsheep/github-to-sqlite"
MARTS = ("documents", "threads", "thread_labels")

pytestmark = pytest.mark.slow


def _load(name: str):
    return json.loads((FIXTURES / name).read_text())


def _land(
    conn, object_type, object_id, number, payload, *, deleted=False, repo_id=REPO_ID, repo=REPO
):
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    conn.execute(
        """
        insert into raw.github_objects
            (repo_id, repo, object_type, object_id, thread_number, payload, payload_hash,
             is_deleted, pass_name)
        values (%s, %s, %s, %s, %s, %s, %s, %s, 'test')
        """,
        (
            repo_id,
            repo,
            object_type,
            object_id,
            number,
            None if deleted else Jsonb(payload),
            digest,
            deleted,
        ),
    )


def _issue(number: int, issue_id: int, *, labels=("bug",), body="Body of **issue**", pr=False):
    issue = copy.deepcopy(_load("issues.json")[0])
    issue.update(
        id=issue_id,
        number=number,
        body=body,
        title=f"Thread {number}",
        html_url=f"https://github.com/{REPO}/{'pull' if pr else 'issues'}/{number}",
        labels=[{"name": name} for name in labels],
    )
    issue.pop("pull_request", None)
    if pr:
        issue["pull_request"] = {"url": "x", "merged_at": "2019-09-20T00:00:00Z"}
    return issue


def _seed(conn) -> None:
    _land(conn, "repository", REPO_ID, None, _load("repo.json"))
    conn.execute(
        "insert into ops.repos (repo_id, full_name, owner_login, owner_type) values (%s, %s, 'dogsheep', 'Organization')",
        (REPO_ID, REPO),
    )
    conn.execute(
        "insert into ops.checkpoints (repo_id, pass_name, high_water) values (%s, 'issues', now())",
        (REPO_ID,),
    )
    _land(conn, "issue", 3, 3, _issue(3, 3, pr=True))
    _land(conn, "issue", 4, 4, _issue(4, 4, labels=("bug", "help wanted")))
    _land(conn, "issue", 5, 5, _issue(5, 5, labels=(), body=None))
    for comment in _load("issue-comments.json"):
        number = int(re.search(r"/(\d+)$", comment["issue_url"]).group(1))
        _land(conn, "issue_comment", comment["id"], number, comment)
    bot = copy.deepcopy(_load("issue-comments.json")[0])
    bot.update(id=777, body="Bumps foo", author_association="NONE")
    bot["user"] = {"login": "dependabot[bot]", "type": "Bot", "id": 1}
    _land(conn, "issue_comment", 777, 4, bot)


def _writes(url: str) -> dict[str, tuple[int, int, int]]:
    with psycopg.connect(url) as conn:
        conn.execute("select pg_stat_force_next_flush()")
        conn.execute("select pg_stat_clear_snapshot()")
        rows = conn.execute(
            "select relname, n_tup_ins, n_tup_upd, n_tup_del from pg_stat_user_tables"
            " where schemaname = 'marts'"
        ).fetchall()
    return {name: (ins, upd, dele) for name, ins, upd, dele in rows}


def _rows(url: str, sql: str, *params):
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def built(module_db_url, tmp_path_factory, run_dbt):
    build_dir = tmp_path_factory.mktemp("dbt")
    # On an empty raw, before any mart exists: unit tests and the first build must pass.
    run_dbt(module_db_url, build_dir, "build")
    with psycopg.connect(module_db_url, autocommit=True) as conn:
        _seed(conn)
    run_dbt(module_db_url, build_dir, "build")
    return {"url": module_db_url, "build_dir": build_dir}


def test_marts_hold_every_thread_and_document(built):
    url = built["url"]
    threads = _rows(url, "select number, kind, is_merged, labels from marts.threads order by 1")
    assert threads == [
        (3, "pr", True, ["bug"]),
        (4, "issue", False, ["bug", "help wanted"]),
        (5, "issue", False, []),
    ]
    docs = dict(
        _rows(url, "select document_id, trust_tier from marts.documents where not is_deleted")
    )
    assert docs["issue_comment:777"] == "machine"
    assert docs["opening_post:4"] == "authoritative"  # the fixture author is OWNER
    assert "opening_post:5" not in docs  # an empty body is nothing to retrieve
    assert len(docs) == 2 + 3 + 1
    labels = _rows(url, "select number, label from marts.thread_labels order by 1, 2")
    assert labels == [(3, "bug"), (4, "bug"), (4, "help wanted")]


def test_second_build_with_nothing_new_writes_nothing(built, run_dbt):
    url = built["url"]
    before = _writes(url)
    run_dbt(url, built["build_dir"], "build")
    after = _writes(url)
    for table in MARTS:
        assert after[table] == before[table], table


def test_a_new_version_rewrites_exactly_what_changed(built, run_dbt):
    url = built["url"]
    comment = _load("issue-comments.json")[2]
    with psycopg.connect(url, autocommit=True) as conn:
        edited = {**comment, "body": "Edited: see [the docs](https://example.com)"}
        _land(conn, "issue_comment", comment["id"], 4, edited)
        _land(conn, "issue_comment", 777, 4, None, deleted=True)
        _land(conn, "issue", 4, 4, _issue(4, 4, labels=("help wanted",)))
    before = _writes(url)
    run_dbt(url, built["build_dir"], "build")
    after = _writes(url)
    delta = {t: tuple(a - b for a, b in zip(after[t], before[t], strict=True)) for t in MARTS}
    # the edited comment, the tombstoned bot comment, and issue 4's opening post (its labels
    # are not part of a document, but its updated_at is unchanged too: so only 2 documents)
    assert delta["documents"] == (2, 0, 2)
    assert delta["threads"] == (1, 0, 1)
    assert delta["thread_labels"] == (0, 0, 1)
    text = _rows(
        url,
        "select body_text from marts.documents where document_id = %s",
        f"issue_comment:{comment['id']}",
    )
    assert text == [("Edited: see the docs",)]
    assert _rows(
        url,
        "select is_deleted, body_text from marts.documents where document_id = 'issue_comment:777'",
    ) == [(True, "Bumps foo")]
    # and once more, nothing
    before = _writes(url)
    run_dbt(url, built["build_dir"], "build")
    assert all(_writes(url)[t] == before[t] for t in MARTS)


def test_reader_reads_marts_and_nothing_else(built):
    reader = database.reader_url(built["url"], env={})
    with psycopg.connect(reader) as conn:
        for relation in (
            "documents",
            "threads",
            "thread_labels",
            "repo_status",
            "pass_checkpoints",
        ):
            conn.execute(f"select * from marts.{relation} limit 1").fetchall()
        status = conn.execute("select repo, threads, documents from marts.repo_status").fetchall()
        assert status == [(REPO, 3, 5)]
        for relation in (
            "raw.github_objects",
            "ops.checkpoints",
            "staging.stg_github__issues",
            "intermediate.int_documents_normalized",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(f"select 1 from {relation} limit 1")
            conn.rollback()
