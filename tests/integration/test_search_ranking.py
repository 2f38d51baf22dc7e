"""BM25 over the models' corpus statistics: what the ranking owes a reader, tested on a
corpus small enough to reason about by hand, landed by the real writer and built by dbt."""

from __future__ import annotations

import asyncio
import re

import psycopg
import pytest
from fixtures import corpus_payloads as gh
from fixtures import world as worlds
from fixtures.reads import read as on_reader
from fixtures.reads import search as _search

from relore.contract import render
from relore.extract.landing import RawObject, Repo, land
from relore.operate import database
from relore.serve import errors, thread
from relore.serve.clone.why import marts as why

REPO = Repo(4242, "acme/ranking")
OWNER = gh.user("acme", 9000, "Organization")
AUTHOR = gh.user("reporter", 9001)
T0 = 1_700_000_000


def _issue(number: int, title: str, body: str, pull: dict | None = None) -> RawObject:
    payload = gh.plain_issue(
        REPO.full_name,
        number,
        title,
        body,
        issue_id=50_000 + number,
        author=AUTHOR,
        created=T0 + number,
        pull=pull,
    )
    return RawObject("issue", payload["id"], number, payload)


def _land(url: str, objects: list[RawObject]) -> int:
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction(), conn.cursor() as cur:
        return land(cur, REPO, "test", objects)


# 40 issues say "timeout" over and over; one says "deadlock" once. No issue says both.
FREQUENT = [
    _issue(n, f"Report {n}", "The timeout fires. Another timeout, and a timeout again.")
    for n in range(1, 41)
]
RARE = _issue(41, "Report 41", "A deadlock in the pool when two workers wait on each other.")
FAILING = _issue(
    42, "Model run crashes", "Running it fails:\n\nValueError: shapes (3,) and (4,) not aligned\n"
)
# a pull request claiming to close an issue the index never fetched
CLAIM = _issue(
    43, "Align the shapes", "Fixes #99 by padding first.", {"draft": False, "merged_at": None}
)


def _land_world(landing: worlds.Landing) -> None:
    repository = gh.repository(REPO.full_name, REPO.repo_id, OWNER, T0, T0, 41)
    _land(landing.url, [RawObject("repository", REPO.repo_id, None, repository)])
    _land(landing.url, [*FREQUENT, RARE, FAILING, CLAIM])


WORLD_PART = worlds.Part(REPO.full_name, land=_land_world)


@pytest.fixture(scope="module")
def ranked_db(indexed_world):
    """The shared world, where this corpus is one repository of several."""
    return indexed_world.url, indexed_world.build_dir


@pytest.fixture(scope="module")
def ranked_copy(world_copy, tmp_path_factory):
    """A copy of the world for the test that lands a document and builds again."""
    return world_copy, tmp_path_factory.mktemp("dbt")


def test_a_rare_term_outranks_a_frequent_dense_one_when_coverage_ties(ranked_db):
    page = _search(ranked_db[0], q="timeout deadlock", repo=REPO.full_name)
    assert page["widened"] is True
    # density alone (ts_rank) put the thrice-timeout issues first; IDF puts the one
    # document holding the rare term first
    assert page["hits"][0]["number"] == 41
    assert {h["number"] for h in page["hits"][1:]} <= set(range(1, 41))


def test_corpus_statistics_describe_the_live_documents(ranked_db):
    with psycopg.connect(ranked_db[0]) as conn:
        documents, avg_length = conn.execute(
            "select documents, avg_length from marts.corpus_stats where repo_id = %s",
            (REPO.repo_id,),
        ).fetchone()
        frequency = dict(
            conn.execute(
                "select lexeme, documents from marts.lexeme_stats "
                "where repo_id = %s and lexeme in ('timeout', 'deadlock')",
                (REPO.repo_id,),
            ).fetchall()
        )
        live, mean = conn.execute(
            "select count(*), avg(length(search_vector)) from marts.documents "
            "where repo_id = %s and not is_deleted",
            (REPO.repo_id,),
        ).fetchone()
    assert (documents, frequency) == (43, {"timeout": 40, "deadlock": 1})
    assert (documents, round(avg_length, 6)) == (live, round(float(mean), 6))


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_statistics_refresh_only_once_drift_is_reached(ranked_copy, run_dbt):
    url, build = ranked_copy

    def refreshed():
        with psycopg.connect(url) as conn:
            return conn.execute(
                "select documents from marts.corpus_stats where repo_id = %s", (REPO.repo_id,)
            ).fetchone()[0]

    # one new document of 43 (2.3%) is past the default 2% drift
    _land(url, [_issue(44, "Report 44", "A deadlock again, in the scheduler this time.")])
    run_dbt(url, build, "build", "--vars", "{relore_stats_drift: 0.05}")
    assert refreshed() == 43, "under 5% drift the statistics must not be recounted"
    run_dbt(url, build, "build")
    assert refreshed() == 44
    with psycopg.connect(url) as conn:
        deadlock = conn.execute(
            "select documents from marts.lexeme_stats where repo_id = %s and lexeme = 'deadlock'",
            (REPO.repo_id,),
        ).fetchone()[0]
    assert deadlock == 2


def test_rationale_with_no_authoritative_answer_lowers_its_floor_and_says_so(ranked_db):
    # every author here is NONE: before authority runs, maintainers look just like this
    page = _search(ranked_db[0], q="deadlock", repo=REPO.full_name, kind="rationale")
    assert page["trust_lowered"] == {
        "from": ["authoritative"],
        "to": ["authoritative", "reported"],
    }
    assert {h["number"] for h in page["hits"]} <= {41, 44}  # 44 lands in the drift test (its copy)
    assert 41 in {h["number"] for h in page["hits"]}
    assert {h["trust"] for h in page["hits"]} == {"reported"}
    assert "trust floor lowered" in render.search_page(page)
    asked = _search(ranked_db[0], q="deadlock", repo=REPO.full_name, trust="authoritative")
    assert asked["hits"] == [] and "trust_lowered" not in asked


def test_one_pasted_error_line_is_searched_by_its_error_signal_too(ranked_db):
    page = _search(
        ranked_db[0], q="ValueError: shapes (5,) and (6,) not aligned", repo=REPO.full_name
    )
    assert page["expanded"] is True
    error_leg = next(leg for leg in page["legs"] if leg["leg"] == "error")
    # the numbers differ from the stored line; the normal form does not
    assert error_leg["returned"] >= 1
    assert page["hits"][0]["number"] == 42


def test_inflight_answers_for_an_issue_the_index_never_fetched(ranked_db):
    async def go():
        reader = database.reader_url(ranked_db[0], env={})
        async with await psycopg.AsyncConnection.connect(reader, autocommit=True) as conn:
            return await thread.inflight(conn, REPO.full_name, 99)

    page = asyncio.run(go())
    assert page["thread"] == {"repo": REPO.full_name, "number": 99, "indexed": False}
    assert [(p["number"], p["state"]) for p in page["pulls"]] == [(43, "open")]
    assert "not indexed; claims to close it are" in render.inflight_page(page)


def test_an_error_filter_alone_answers_from_its_threads_newest_first(ranked_db):
    error = {"error": "ValueError: shapes (1,) and (2,) not aligned", "repo": REPO.full_name}
    page = _search(ranked_db[0], q="", **error)
    assert [h["number"] for h in page["hits"]] == [42]
    # with text, the text ranks within the signal's threads; the answer is the same
    worded = _search(ranked_db[0], q="crashes", **error)
    assert [h["number"] for h in worded["hits"]] == [42]


def test_a_repository_named_in_another_case_is_the_same_repository(ranked_db):
    lower = _search(ranked_db[0], q="deadlock", repo=REPO.full_name)
    other = _search(ranked_db[0], q="deadlock", repo=REPO.full_name.upper())
    assert [h["document_id"] for h in other["hits"]] == [h["document_id"] for h in lower["hits"]]
    assert other["filters"]["repo"] == REPO.full_name.upper()  # echoed as asked
    request = thread.parse_request({"repo": "Acme/Ranking", "number": "41"})
    page = on_reader(ranked_db[0], lambda conn: thread.thread(conn, request))
    assert page["thread"]["number"] == 41


def test_a_search_naming_a_repository_the_index_does_not_hold_is_not_indexed(ranked_db):
    with pytest.raises(errors.NotIndexed) as refused:
        _search(ranked_db[0], q="deadlock", repo="acme/elsewhere")
    assert refused.value.status == 404
    assert REPO.full_name in refused.value.extra["indexed"]
    assert "acme/elsewhere" not in refused.value.extra["indexed"]
    assert "acme/elsewhere is not indexed here" in refused.value.message


# Every read keyed on a repository, as serve runs it: with the repo_id resolved once, each is
# an index lookup on its mart (a `lower(repo)` comparison could use none).
KEYED_READS = {
    "thread head": (thread._HEAD, {"number": 41}, "threads"),
    "thread comments": (thread._COMMENTS, {"number": 41, "terms": []}, "documents"),
    "why pulls": (why._PULLS, {"numbers": [43]}, "threads"),
    "why carried": (why._CARRIED, {"shas": ["a" * 40]}, "thread_commits"),
    "why review comments": (
        why._REVIEW_COMMENTS,
        {"number": 43, "paths": ["a.py"]},
        "documents",
    ),
}


@pytest.mark.parametrize("read", sorted(KEYED_READS))
def test_a_read_keyed_on_repo_id_is_an_index_lookup(ranked_db, read):
    sql, params, table = KEYED_READS[read]

    async def plan(conn):
        await conn.execute("set enable_seqscan = off")  # a seq scan only when nothing else can
        cur = await conn.execute("explain " + sql, {"repo_id": REPO.repo_id, **params})
        return "\n".join(row[0] for row in await cur.fetchall())

    text = on_reader(ranked_db[0], plan)
    assert f"Seq Scan on {table}" not in text, text
    assert re.search(rf"(Index (Only )?Scan .*|Bitmap Heap Scan )on {table}\b", text), text
