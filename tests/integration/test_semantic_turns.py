"""A pull request's later turns as passages of the semantic tier: a review comment describes
the kind of change its pull request made, so a change description only a review turn tells is
found by meaning; a bot's turn never becomes a passage; and a thread whose turns did not
change keeps its passages (no row rewritten, nothing embedded again). Landed by hand into the
shared world (a pull request, its review comments, an issue), built by dbt, on a copy."""

from __future__ import annotations

import io
import json

import psycopg
import pytest
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import search

from relore.operate import cli as relored

REPO, REPO_ID = "acme/turns", 4848
# the pull request's title and opening post say nothing of what its review says it does
PULL = (1, "Bump the client to 2.4", "Release preparation, see the changelog.")
REVIEW = (
    "This retries every upload three times with exponential backoff whenever the storage "
    "server answers with a transient 503, so a flaky network no longer fails the release."
)
BOT_REVIEW = "Coverage report: 91.3% of lines covered (+0.2%). No files with lowered coverage."
ISSUES = {
    2: ("Dark theme colours unreadable", "Grey labels on the charcoal background have almost "
        "no contrast when the dark theme is enabled."),
    3: ("Typo in the installation guide", "The README spells 'dependency' as 'dependancy'."),
}  # fmt: skip
# none of the review's words (nor their stems): only meaning connects them
DESCRIPTION = (
    "make publishing survive connection hiccups by pausing increasingly before each new attempt"
)


def _user(login: str, kind: str = "User") -> dict:
    return {"login": login, "id": sum(map(ord, login)), "type": kind}


def _land(conn, object_type: str, object_id: int, number: int, payload: dict) -> None:
    indexed.land_raw(conn, REPO, REPO_ID, object_type, object_id, number, payload)


def _review_comment(conn, comment_id: int, number: int, body: str, author: dict) -> None:
    when = f"2022-08-0{comment_id % 7 + 1}T00:00:00Z"
    _land(conn, "review_comment", comment_id, number, {
        "id": comment_id, "pull_request_review_id": 8000 + comment_id, "body": body,
        "path": "src/upload.py", "line": 10, "original_line": 10, "side": "RIGHT",
        "commit_id": "e" * 40, "original_commit_id": "e" * 40, "diff_hunk": "@@ -1 +1 @@",
        "user": author, "author_association": "MEMBER",
        "html_url": f"https://github.com/{REPO}/pull/{number}#discussion_r{comment_id}",
        "pull_request_url": f"https://api.github.com/repos/{REPO}/pulls/{number}",
        "created_at": when, "updated_at": when,
    })  # fmt: skip


def _seed(conn) -> None:
    conn.execute(
        "insert into ops.repos (repo_id, full_name, owner_login, owner_type)"
        " values (%s, %s, 'acme', 'Organization')",
        (REPO_ID, REPO),
    )
    number, title, body = PULL
    threads = {number: (title, body, True), **{n: (*t, False) for n, t in ISSUES.items()}}
    for n, (title, body, pull) in threads.items():
        when = f"2022-0{n}-01T00:00:00Z"
        issue = {
            "id": 9000 + n, "number": n, "title": title, "state": "closed", "body": body,
            "user": _user("maint"), "author_association": "OWNER", "labels": [],
            "comments": 0, "created_at": when, "updated_at": when,
            "html_url": f"https://github.com/{REPO}/{'pull' if pull else 'issues'}/{n}",
        }  # fmt: skip
        if pull:
            issue["pull_request"] = {"merged_at": when}
        _land(conn, "issue", 9000 + n, n, issue)
    _land(conn, "pull", 5001, number, {
        "id": 5001, "number": number, "state": "closed", "merged": True,
        "merged_at": "2022-01-02T00:00:00Z", "merge_commit_sha": "1" * 40,
        "head": {"sha": "2" * 40, "ref": "bump"}, "base": {"sha": "0" * 40, "ref": "main"},
        "changed_files": 1, "additions": 1, "deletions": 1,
    })  # fmt: skip
    _review_comment(conn, 7101, number, REVIEW, _user("reviewer"))
    _review_comment(conn, 7102, number, BOT_REVIEW, _user("coverage-bot[bot]", "Bot"))


def _land_world(landing: worlds.Landing) -> None:
    with psycopg.connect(landing.url, autocommit=True) as conn:
        _seed(conn)


WORLD_PART = worlds.Part(REPO, land=_land_world)


@pytest.fixture(scope="module")
def copy(world_copy, tmp_path_factory):
    return world_copy, tmp_path_factory.mktemp("dbt")


def _embed(url: str) -> dict:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_DATABASE_URL": url}
    code = relored.main(["embed", "--repo", REPO, "--json"], env=env, out=out, err=err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())["repos"][0]


def _passages(url: str) -> list[tuple]:
    """(thread, passage index, document, text hash, the row's version, written_at)."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            "select thread_number, passage_index, document_id, text_hash, xmin::text,"
            " written_at from marts.semantic_passages where repo_id = %s order by 1, 2",
            (REPO_ID,),
        ).fetchall()


def test_a_change_only_a_review_turn_describes_is_found_by_meaning(copy):
    url, _ = copy
    _embed(url)
    page = search(url, q=DESCRIPTION, repo=REPO)
    assert page["tiers"]["semantic"]["state"] == "answered"
    top = page["hits"][0]
    assert top["number"] == PULL[0] and "meaning" in top["matched_by"]
    # a thread of several passages is one place on the page
    assert [h["number"] for h in page["hits"]].count(PULL[0]) == 1
    # the hit shows the turn it was found by, not the opening post
    assert top["document_kind"] == "review_comment"
    assert "exponential backoff" in top["snippet"]


def test_a_bot_turn_never_becomes_a_passage(copy):
    url, _ = copy
    documents = {document for _, _, document, *_ in _passages(url)}
    assert "review_comment:7101" in documents
    assert "review_comment:7102" not in documents, "a bot's review comment was embedded"


@pytest.mark.slow  # two dbt builds of the world's copy
def test_a_new_turn_embeds_only_its_own_text_and_a_bot_turn_rewrites_nothing(copy, run_dbt):
    url, build = copy
    _embed(url)
    before = _passages(url)
    with psycopg.connect(url, autocommit=True) as conn:
        _review_comment(conn, 7103, PULL[0], "Coverage report: unchanged.", _user("ci[bot]", "Bot"))
    run_dbt(url, build, "build")
    assert _passages(url) == before, "a bot's turn rewrote the thread's passages"
    with psycopg.connect(url, autocommit=True) as conn:
        wait = (
            "Please cap the total wait at one minute: a dead server would hold the job for hours."
        )
        _review_comment(conn, 7104, PULL[0], wait, _user("r2"))
    run_dbt(url, build, "build")
    after = _passages(url)
    assert {h for *_, h, _, _ in before} < {h for *_, h, _, _ in after}
    report = _embed(url)
    # the thread's passages were written again, but only the new turn's text is embedded
    assert (report["embedded"], report["retired"]) == (1, 0)
