"""Search ranks every match by BM25, and its index is a cache of the marts that never serves
half of itself.

A repository of 5,200 issues (more than the old candidate cap of 5,000 GIN matches), every
one saying "timeout" with its own density and length, landed by the real writer and built
by dbt in the shared world. The expectation is computed here from the stored tsvectors and
the BM25F definition (k1 1.2, b 0.75, the field weights of serve/lexical/schema.py), not
read from the index."""

from __future__ import annotations

import math
import random
import threading
from collections import Counter

import psycopg
import pytest
from fixtures import corpus_payloads as gh
from fixtures import world as worlds
from fixtures.reads import search as _search

from relore.extract.landing import RawObject, Repo, land
from relore.operate import database
from relore.serve.lexical import query, schema, store

REPO = Repo(4646, "acme/frequent")
OWNER = gh.user("acme", 9200, "Organization")
AUTHOR = gh.user("reporter", 9201)
T0 = 1_700_000_000
ISSUES = 5200
FILLER = ["pool", "worker", "queue", "socket", "retry", "backoff", "handler", "stream"]


def _body(number: int) -> str:
    rng = random.Random(number)
    words = ["timeout"] * rng.randint(1, 6) + [
        rng.choice(FILLER) for _ in range(rng.randint(2, 30))
    ]
    rng.shuffle(words)
    if number > ISSUES - 20:  # the densest, shortest documents land last
        words = ["timeout"] * 8 + ["pool"]
    return " ".join(words) + "."


def _issue(number: int) -> RawObject:
    payload = gh.issue(
        REPO.full_name, number=number, issue_id=70_000 + number, title=f"Case {number}",
        body=_body(number), author=AUTHOR, association="NONE", labels=[], state="open",
        state_reason=None, locked=False, assignees=[], milestone_obj=None, comments=0,
        created=T0 + number, updated=T0 + number, closed=None, closed_by=None,
        reaction_counts={}, pull=None, issue_type=None, sub_issues=(0, 0), parent=None,
    )  # fmt: skip
    return RawObject("issue", payload["id"], number, payload)


def _land_world(landing: worlds.Landing) -> None:
    repository = gh.repository(REPO.full_name, REPO.repo_id, OWNER, T0, T0, ISSUES)
    with (
        psycopg.connect(landing.url, autocommit=True) as conn,
        conn.transaction(),
        conn.cursor() as cur,
    ):
        land(cur, REPO, "test", [RawObject("repository", REPO.repo_id, None, repository)])
        land(cur, REPO, "test", [_issue(n) for n in range(1, ISSUES + 1)])


WORLD_PART = worlds.Part(REPO.full_name, land=_land_world)


@pytest.fixture
def own_index(monkeypatch, tmp_path):
    """The repository in an index of its own (sharing off, a directory of the test's): BM25
    by hand is over its documents alone, where the shared index's average length is every
    member's (test_search_across.py compares the two)."""
    monkeypatch.setenv("RELORE_SHARED_INDEX_DOCUMENTS", "0")
    monkeypatch.setenv("RELORE_INDEX_DIR", str(tmp_path / "own"))


def _expected_bm25(url: str, lexemes: list[str]) -> dict[str, float]:
    """BM25F by hand over the live documents' stored tsvectors."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            """
            select d.document_id, u.lexeme, u.weights
            from marts.documents as d, unnest(d.search_vector) as u
            where d.repo_id = %s and not d.is_deleted
            """,
            (REPO.repo_id,),
        ).fetchall()
    weight = schema.FIELD_WEIGHTS
    length: Counter = Counter()
    tf: dict[str, Counter] = {}
    for document_id, lexeme, weights in rows:
        occurrences = sum(weight[w] for w in weights)
        length[document_id] += occurrences
        tf.setdefault(document_id, Counter())[lexeme] += occurrences
    n = len(length)
    average = sum(length.values()) / n
    frequency = Counter(x for counts in tf.values() for x in counts)
    scores = {}
    for document_id, counts in tf.items():
        if not all(x in counts for x in lexemes):
            continue
        score = 0.0
        for x in lexemes:
            idf = math.log(1 + (n - frequency[x] + 0.5) / (frequency[x] + 0.5))
            f = counts[x]
            norm = 1.2 * (1 - 0.75 + 0.75 * length[document_id] / average)
            score += idf * f * 2.2 / (f + norm)
        scores[document_id] = score
    return scores


def test_a_frequent_term_returns_the_true_top_ten_of_every_match(indexed_world, own_index):
    page = _search(indexed_world.url, q="timeout", repo=REPO.full_name)
    expected = _expected_bm25(indexed_world.url, ["timeout"])
    assert page["total"] == len(expected) == ISSUES
    best = sorted(expected.items(), key=lambda kv: -kv[1])[:10]
    # every one of the true top ten, in score order (ties broken by the index, so compare
    # scores rather than ids where they tie)
    assert [round(h["score"], 3) for h in page["hits"]] == [round(s, 3) for _, s in best]
    assert {h["number"] for h in page["hits"]} <= set(range(ISSUES - 19, ISSUES + 1))


def test_bm25_scores_match_the_hand_computed_definition(indexed_world, own_index):
    page = _search(indexed_world.url, q="timeout backoff", repo=REPO.full_name)
    expected = _expected_bm25(indexed_world.url, ["timeout", "backoff"])
    assert page["hits"] and not page["widened"]
    for hit in page["hits"]:
        assert hit["score"] == pytest.approx(expected[hit["document_id"]], rel=1e-3), hit
    assert page["all_terms"] == len(expected)
    # the count is of the documents the page is drawn from at any limit: those holding at
    # least one of the words (a shorter page would be filled from them)
    assert page["total_holds"] == 1 and page["total"] >= len(expected)


def _pages(url: str) -> list[list[tuple]]:
    asked = [{"q": "timeout"}, {"q": "timeout backoff"}, {"q": "socket retry stream"}]
    return [
        [
            (h["document_id"], h["score"])
            for h in _search(url, repo=REPO.full_name, **params)["hits"]
        ]
        for params in asked
    ]


def _index(url: str) -> store.Indexes:
    return store.for_connection_url(database.reader_url(url, env={}))


def test_an_index_rebuilt_from_scratch_gives_identical_pages(indexed_world):
    before = _pages(indexed_world.url)
    indexes = _index(indexed_world.url)
    done = indexes.refresh(REPO.repo_id, full=True)
    assert (done.action, done.documents) == ("built", ISSUES)
    assert _pages(indexed_world.url) == before


def test_a_refresh_during_reads_never_serves_an_error_or_half_an_index(indexed_world):
    _pages(indexed_world.url)  # built
    indexes = _index(indexed_world.url)
    wanted = query.Filters(tiers=("reported",))
    stop = threading.Event()
    seen: list = []
    failures: list = []

    def read():
        # readers of their own, as another process has
        reader = store.Indexes(indexes.root.parent, indexes.root.name, indexes.conninfo).reader(
            REPO.repo_id
        )
        while not stop.is_set():
            try:
                searcher = reader.searcher()
                seen.append(query.count(searcher, query.build(searcher, ["timeout"], 1, wanted)))
            except Exception as exc:  # any failure is the finding
                failures.append(repr(exc))

    readers = [threading.Thread(target=read) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        for _ in range(3):
            indexes.refresh(REPO.repo_id, full=True)
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert failures == []
    assert seen and set(seen) == {ISSUES}


def test_a_page_cut_by_its_limit_does_not_blame_the_thread_cap(indexed_world):
    page = _search(indexed_world.url, q="timeout", repo=REPO.full_name, limit=3)
    assert (page["returned"], page["total"]) == (3, ISSUES)
    # every thread here holds one document: nothing was passed over for its thread
    assert page["per_thread_capped"] is False
    assert "per_thread_cap" not in {n["kind"] for n in page["notices"]}
