"""Long queries with the semantic tier off: a description of a change, a question, a "why"
shares only some of its words with the thread that answers it, and the lexical page must
still rank that thread (BM25 over every document carrying any of the words), say how many
of the words each hit carries, and show them."""

from __future__ import annotations

import psycopg
import pytest
from fixtures import corpus_payloads as gh
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import search as _search

from relore.extract.landing import RawObject, Repo, land
from relore.serve.semantic import fusion

REPO = Repo(4949, "acme/longwords")
OWNER = gh.user("acme", 9100, "Organization")
AUTHOR = gh.user("writer", 9101)
T0 = 1_700_000_000


def _issue(number: int, title: str, body: str) -> RawObject:
    return indexed.issue(REPO, number, title, body, author=AUTHOR, at=T0 + number, id_base=60_000)


# The thread a long description is about: it carries 5 of the description's 13 lexemes
# (decoder, cache, gradient, checkpointing, training), well under half.
RELEVANT = _issue(
    1,
    "Decoder crash with gradient checkpointing",
    "In training the decoder builds a cache while gradient checkpointing recomputes "
    "activations, and the backward pass crashes.",
)
# Threads sharing the description's commonest words only.
NOISE = [
    _issue(n, f"Question {n}", "A user reported that generation was slow on a laptop.")
    for n in range(2, 9)
]
# The only document holding a rare word.
RARE = _issue(20, "Spelling of a plant", "The zanthoxylum test fixture has a typo.")
# A "why" about a file: the thread that touched it says few of the words; another says many
# of them often and never names the file.
FILE_TOUCHED = _issue(
    30, "Generation fix", "Changed quillwork/shape_loader.py so that generation works again."
)
WORDY = _issue(
    31,
    "Loader shapes",
    "The loader reshapes tensors; loader shapes are reshaped per batch, and the reshaping "
    "loader keeps its shapes until the batch ends.",
)
WHY_FILE = (
    "quillwork/shape_loader.py: why does the loader reshape tensors per batch and keep the shapes?"
)

DESCRIPTION = (
    "The decoder keeps its cache under gradient checkpointing during training; switch it "
    "off, warn the user once, and leave inference and generation untouched."
)


def _land_world(landing: worlds.Landing) -> None:
    repository = gh.repository(REPO.full_name, REPO.repo_id, OWNER, T0, T0, 20)
    with (
        psycopg.connect(landing.url, autocommit=True) as conn,
        conn.transaction(),
        conn.cursor() as cur,
    ):
        land(cur, REPO, "test", [RawObject("repository", REPO.repo_id, None, repository)])
        land(cur, REPO, "test", [RELEVANT, *NOISE, RARE, FILE_TOUCHED, WORDY])


WORLD_PART = worlds.Part(REPO.full_name, land=_land_world)


@pytest.fixture
def tier_off(monkeypatch):
    monkeypatch.setattr(fusion, "ENABLED", False)


def test_a_long_query_finds_the_thread_carrying_a_third_of_its_words_with_the_tier_off(
    indexed_world, tier_off
):
    page = _search(indexed_world.url, q=DESCRIPTION, repo=REPO.full_name)
    assert page["hits"], page
    top = page["hits"][0]
    assert top["number"] == 1, [h["number"] for h in page["hits"]]
    assert top["partial"] == "carries 5 of 13 terms"
    assert "checkpointing" in top["snippet"]
    assert page["widened"] is True and page["fill"]["of"] == 13


def test_a_query_whose_rare_word_one_document_carries_never_answers_empty(indexed_world, tier_off):
    page = _search(
        indexed_world.url, q="zanthoxylum pumpernickel walrus lighthouse", repo=REPO.full_name
    )
    assert [h["number"] for h in page["hits"]] == [20]
    assert page["hits"][0]["partial"] == "carries 1 of 4 terms"
    assert "zanthoxylum" in page["hits"][0]["snippet"]


def test_a_file_named_in_a_why_raises_the_thread_that_touched_it_over_a_wordier_one(
    indexed_world, tier_off
):
    """The path is evidence (the threads whose files match it are a leg of their own), not a
    filter: the wordy thread that never names the file still answers, below."""
    page = _search(indexed_world.url, q=WHY_FILE, repo=REPO.full_name)
    numbers = [h["number"] for h in page["hits"]]
    assert numbers[:2] == [30, 31], numbers
    assert page["named_files"] == ["quillwork/shape_loader.py"]
    assert "file" in page["hits"][0]["matched_by"]
    assert page["tiers"]["semantic"]["shape"] == "path_description"


def test_a_fused_page_shows_each_thread_once(indexed_world, tier_off):
    page = _search(indexed_world.url, q=DESCRIPTION, repo=REPO.full_name)
    numbers = [h["number"] for h in page["hits"]]
    assert len(numbers) == len(set(numbers)) > 1, numbers
    assert page["per_thread_cap"] == 1


def test_a_long_question_is_answered_by_its_words_when_meaning_is_unavailable(indexed_world):
    # the tier is on but this database holds no vectors: a fused question's words' leg
    # admits any document holding one of its words, not only those holding half
    assert fusion.ENABLED
    page = _search(indexed_world.url, q=DESCRIPTION, repo=REPO.full_name)
    assert page["tiers"]["semantic"]["state"] == "off", page["tiers"]
    assert page["hits"] and page["hits"][0]["number"] == 1
    assert page["tiers"]["lexical"]["hits"] == len(page["hits"])
