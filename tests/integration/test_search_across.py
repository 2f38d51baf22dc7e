"""A search across repositories (#39): several named with ``repo``, an owner's with ``org``, or
every one held when none is named, ranked together on one scale, each hit naming its
repository and the page saying which repositories answered; and the shared index the small
repositories are members of."""

from __future__ import annotations

import io
import json
from collections import Counter

import psycopg
import pytest
from fixtures import corpus_payloads as gh
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import search as _search

from relore.contract import render
from relore.extract.landing import RawObject, Repo, land
from relore.operate import cli as operate_cli
from relore.operate import database
from relore.serve.errors import NotIndexed
from relore.serve.lexical import generations, store
from relore.serve.semantic import fusion

APP = Repo(8841, "crossorg/app")
LIB = Repo(8842, "crossorg/lib")
OWNER = gh.user("crossorg", 9200, "Organization")
AUTHOR = gh.user("maintainer", 9201)
T0 = 1_700_000_000
ERROR = "FrobnicatorError: the widget cache overflowed at level 7"


def _issue(repo: Repo, number: int, title: str, body: str) -> RawObject:
    base = 70_000 if repo is APP else 80_000
    return indexed.issue(repo, number, title, body, author=AUTHOR, at=T0 + number, id_base=base)


# The app is the large repository: thirty threads, one of them sharing the lib's words.
APP_THREADS = [
    _issue(APP, 1, "Quasar lantern", "quasar lantern"),
    _issue(APP, 3, "Frobnicator docs", "The frobnicator caches widgets per level."),
    *[
        _issue(APP, n, f"Routine report {n}", "The nightly build passed on every platform.")
        for n in range(10, 38)
    ],
]
# The lib is small: three threads, the one that saw the error first among them.
LIB_THREADS = [
    _issue(LIB, 1, "Quasar lantern", "quasar lantern"),
    _issue(
        LIB,
        7,
        "Cache overflow in the frobnicator",
        f"Running the pipeline raises\n\n{ERROR}\n\nFixed by capping the level.",
    ),
    _issue(LIB, 8, "Release notes", "Notes for the next release of the library."),
]


def _lander(repo: Repo, threads: list[RawObject]):
    def land_part(landing: worlds.Landing) -> None:
        payload = gh.repository(repo.full_name, repo.repo_id, OWNER, T0, T0, len(threads))
        with (
            psycopg.connect(landing.url, autocommit=True) as conn,
            conn.transaction(),
            conn.cursor() as cur,
        ):
            land(cur, repo, "test", [RawObject("repository", repo.repo_id, None, payload)])
            land(cur, repo, "test", threads)

    return land_part


WORLD_PARTS = (
    worlds.Part(APP.full_name, land=_lander(APP, APP_THREADS)),
    worlds.Part(LIB.full_name, land=_lander(LIB, LIB_THREADS)),
)


@pytest.fixture
def tier_off(monkeypatch):
    monkeypatch.setattr(fusion, "ENABLED", False)


def _where(page: dict) -> list[tuple[str, int]]:
    return [(h["repo"], h["number"]) for h in page["hits"]]


@pytest.mark.parametrize(
    "scope", [{}, {"org": "crossorg"}, {"repo": [APP.full_name, LIB.full_name]}]
)
def test_a_search_without_repo_ranks_another_repositorys_thread_first_when_it_is_the_best_match(
    indexed_world, scope
):
    """An agent working in the app pastes an error the lib saw first: asked of every
    repository (or the owner's, or both named), the lib's thread leads."""
    page = _search(indexed_world.url, q=ERROR, **scope)
    assert _where(page)[0] == (LIB.full_name, 7), _where(page)
    assert page["repositories"]["answered"][LIB.full_name] >= 1
    assert ERROR.split(":")[0].lower() in page["hits"][0]["snippet"].lower()


def test_the_same_words_score_alike_in_a_small_and_a_large_repository(indexed_world, tier_off):
    """Each repository's own idf would score the app's "quasar lantern" three times the lib's
    (a word once in 30 threads against once in 3); one idf across both leaves only their
    lengths' norms apart."""
    page = _search(indexed_world.url, q="quasar lantern", org="crossorg")
    scores = {(h["repo"], h["number"]): h["score"] for h in page["hits"]}
    app, lib = scores[(APP.full_name, 1)], scores[(LIB.full_name, 1)]
    assert max(app, lib) / min(app, lib) < 1.5, scores


def test_a_fused_page_across_repositories_keeps_threads_of_one_number_apart(
    indexed_world, tier_off
):
    """Both repositories have a thread 1 saying the same: a fused page (a description) shows
    each, named by its repository, and says which repositories answered."""
    page = _search(indexed_world.url, q="the quasar lantern of the frobnicator", org="crossorg")
    assert page["tiers"]["semantic"]["route"] == "fused"
    where = _where(page)
    assert (APP.full_name, 1) in where and (LIB.full_name, 1) in where, where
    assert len(where) == len(set(where))
    assert page["repositories"]["searched"] == 2
    shown = render.search_page(page)
    assert "ranked together across 2 repositories" in shown
    assert f"{LIB.full_name}#1" in shown and f"{APP.full_name}#1" in shown


def test_naming_repositories_ranks_those_only(indexed_world, tier_off):
    page = _search(indexed_world.url, q="quasar lantern", repo=[LIB.full_name, APP.full_name])
    assert {repo for repo, _ in _where(page)} == {APP.full_name, LIB.full_name}
    page = _search(indexed_world.url, q="quasar lantern", repo=[LIB.full_name])
    assert _where(page) == [(LIB.full_name, 1)]
    assert "repositories" not in page  # one repository: its own index, as before


def test_an_owner_with_nothing_indexed_is_a_404_naming_what_is_held(indexed_world):
    with pytest.raises(NotIndexed) as refused:
        _search(indexed_world.url, q="quasar", org="nobody-here")
    assert "no repository of nobody-here is indexed" in str(refused.value)
    assert LIB.full_name in str(refused.value)


def test_a_filter_only_page_across_repositories_is_newest_first(indexed_world):
    page = _search(indexed_world.url, error=ERROR, org="crossorg")
    assert _where(page) == [(LIB.full_name, 7)]


# The shared index: the small repositories here are members of one index (both are far below
# generations.SHARED_LIMIT), a search across them walks it once, and a search in one reads
# as its own index would.

QUERIES = [
    {"q": "quasar lantern"},
    {"q": ERROR},
    {"q": "nightly build platform"},
    {"q": "the quasar lantern of the frobnicator caches widgets per level"},
    {"q": "", "error": ERROR},
]
SCOPES = [{"repo": APP.full_name}, {"repo": LIB.full_name}, {"org": "crossorg"}, {}]


def _indexes(url: str) -> store.Indexes:
    return store.for_connection_url(database.reader_url(url, env={}))


def _key(url: str) -> str:
    """The index directory's name for the database at ``url``."""
    return _indexes(url).root.name


# Thread 1 of the app and of the lib say the same words: one average length ties them in the
# shared index, where each repository's own average parts them by a hair, either way.
TWINS = {(APP.full_name, 1), (LIB.full_name, 1)}


def _seen(page: dict) -> list[tuple]:
    """The page's hits in order, twins told apart by nothing but their place: the app's and
    the lib's thread 1, and any document two repositories hold from one generated corpus
    (the demos': one number, one id, one text)."""
    return [
        ("twin",) if (h["repo"], h["number"]) in TWINS else (h["number"], h["document_id"])
        for h in page["hits"]
    ]


def test_the_small_repositories_are_members_of_one_shared_index(indexed_world):
    _search(indexed_world.url, q="quasar", org="crossorg")  # builds what is missing
    indexes = _indexes(indexed_world.url)
    for repo in (APP, LIB):
        reader = indexes.reader(repo.repo_id)
        assert isinstance(reader, store.MemberReader), repo
        assert reader.repo_dir == indexes.root / generations.SHARED
    current = generations.SharedCurrent.read(indexes.root / generations.SHARED)
    slots = {current.members[r.repo_id].slot for r in (APP, LIB)}
    assert len(slots) == 2 and 0 not in slots


def test_a_search_in_one_member_never_shows_another_members_documents(indexed_world, tier_off):
    """Both repositories hold "quasar lantern" in their thread 1: asked of the lib alone,
    only the lib's thread is there, and the count is the lib's."""
    page = _search(indexed_world.url, q="quasar lantern", repo=LIB.full_name)
    assert [(h["repo"], h["number"]) for h in page["hits"]] == [(LIB.full_name, 1)]
    assert page["total"] == 1


def test_pages_are_the_same_whether_small_repositories_share_an_index_or_not(
    indexed_world, tier_off, monkeypatch, tmp_path
):
    """Every query in every scope, read from the shared index and then from indexes of
    their own (sharing off, another index directory): the same first threads, shown by the
    same documents, and most of the rest."""
    shared = {
        (i, j): _seen(_search(indexed_world.url, **q, **scope))
        for i, q in enumerate(QUERIES)
        for j, scope in enumerate(SCOPES)
    }
    monkeypatch.setenv("RELORE_INDEX_DIR", str(tmp_path / "own"))
    monkeypatch.setenv("RELORE_SHARED_INDEX_DOCUMENTS", "0")
    own = {
        (i, j): _seen(_search(indexed_world.url, **q, **scope))
        for i, q in enumerate(QUERIES)
        for j, scope in enumerate(SCOPES)
    }
    indexes = _indexes(indexed_world.url)
    assert not isinstance(indexes.reader(LIB.repo_id), store.MemberReader)
    assert not (indexes.root / generations.SHARED).exists()
    assert any(shared.values())
    # the same first hits, and most of the rest: BM25 normalises by the average length of
    # the index a document is in, so lower down, where a page is filled with documents
    # holding one or two of the words, near-tied threads may trade places
    for (query, scope), page in shared.items():
        theirs = own[(query, scope)]
        first = 2 if "repo" in SCOPES[scope] else 1  # one repository: its own idf either way
        assert len(page) == len(theirs) and page[:first] == theirs[:first], (scope, page, theirs)
        common = sum((Counter(page) & Counter(theirs)).values())
        assert common >= 0.7 * len(page), (query, scope, page, theirs)


def test_a_repository_past_the_limit_gets_an_index_of_its_own(indexed_world, monkeypatch, tmp_path):
    """With room for 10 documents, the app (30 threads) is indexed on its own and the lib
    (3) joins the shared index; ``relored index`` says which is where."""
    monkeypatch.setenv("RELORE_INDEX_DIR", str(tmp_path / "limited"))
    monkeypatch.setenv("RELORE_SHARED_INDEX_DOCUMENTS", "10")
    env = {
        "RELORE_DATABASE_URL": indexed_world.url,
        "RELORE_INDEX_DIR": str(tmp_path / "limited"),
        "RELORE_SHARED_INDEX_DOCUMENTS": "10",
    }
    out, err = io.StringIO(), io.StringIO()
    assert operate_cli.main(["index", "--json"], env=env, out=out, err=err) == 0, err.getvalue()
    where = {r["repo"]: r["index"] for r in json.loads(out.getvalue())["indexes"]}
    assert where[APP.full_name] == "own" and where[LIB.full_name] == "shared"
    page = _search(indexed_world.url, q=ERROR, org="crossorg")
    assert _where(page)[0] == (LIB.full_name, 7)
    # the lib grown past a lower limit: kept where it is until a full rebuild places it again
    env["RELORE_SHARED_INDEX_DOCUMENTS"] = "2"
    out = io.StringIO()
    assert operate_cli.main(["index", "--json", "--repo", LIB.full_name], env=env, out=out) == 0
    assert json.loads(out.getvalue())["indexes"][0]["index"] == "shared"
    out = io.StringIO()
    argv = ["index", "--json", "--full", "--repo", LIB.full_name]
    assert operate_cli.main(argv, env=env, out=out) == 0
    (moved,) = json.loads(out.getvalue())["indexes"]
    assert (moved["index"], moved["action"], moved["documents"]) == ("own", "built", 3)
    current = generations.SharedCurrent.read(
        tmp_path / "limited" / _key(indexed_world.url) / "shared"
    )
    assert LIB.repo_id not in current.members


def test_refreshing_one_member_re_reads_its_threads_and_leaves_the_others(
    world_copy, run_dbt, tmp_path
):
    """A new comment in the lib: the next search re-reads the lib's thread into the shared
    index; the app's documents are untouched and still found."""
    before = _search(world_copy, q="nightly build", repo=APP.full_name)
    assert before["total"] > 0
    indexes = _indexes(world_copy)
    with (
        psycopg.connect(world_copy, autocommit=True) as conn,
        conn.transaction(),
        conn.cursor() as cur,
    ):
        said = indexed.issue_comment(
            LIB, 8, 88_001, "A wombat nibbled the release notes.", author=AUTHOR, at=T0 + 99
        )
        land(cur, LIB, "test", [said])
    run_dbt(world_copy, tmp_path, "build")
    page = _search(world_copy, q="wombat", org="crossorg")
    assert [(h["repo"], h["number"]) for h in page["hits"]] == [(LIB.full_name, 8)]
    assert indexes.reader(LIB.repo_id).current.marks != indexes.reader(APP.repo_id).current.marks
    after = _search(world_copy, q="nightly build", repo=APP.full_name)
    assert _seen(after) == _seen(before) and after["total"] == before["total"]
