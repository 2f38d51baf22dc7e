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

from relore.contract import render
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

# A change told across a thread's turns: its opening post, then two replies, each carrying
# three or four of SPREAD's eleven lexemes; the wordiest single document elsewhere carries
# five of them (ONE_COMMENT), a bot's report on a third thread carries all of them.
BOT = gh.user("ci-reporter[bot]", 9102, "Bot")
TURNS = [
    _issue(40, "Tokenizer warnings", "The tokenizer warns about truncation."),
    indexed.issue_comment(
        REPO, 40, 60_400, "Setting the padding side left fixes batched generation.",
        author=AUTHOR, at=T0 + 400,
    ),
    indexed.issue_comment(
        REPO, 40, 60_401, "Added a regression test for the attention mask.",
        author=AUTHOR, at=T0 + 401,
    ),
]  # fmt: skip
ONE_COMMENT = _issue(41, "Suite noise", "Tokenizer truncation warning in one regression test.")
BOT_REPORT = [
    _issue(42, "Nightly run", "Nightly results."),
    indexed.issue_comment(
        REPO, 42, 60_420,
        "truncation warning tokenizer padding side batched generation attention mask "
        "regression test failed",
        author=BOT, at=T0 + 420,
    ),
]  # fmt: skip
SPREAD = (
    "truncation warnings from the tokenizer, the padding side of batched generation, and a "
    "regression test for the attention mask"
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
        land(cur, REPO, "test", [*TURNS, ONE_COMMENT, *BOT_REPORT])


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
    shown = render.search_page(page).split("\n2. ")[0]
    assert "(touched a file the query names)" in shown


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


def test_a_change_told_across_a_threads_turns_outranks_one_wordier_comment(indexed_world, tier_off):
    """Ranked by its best document alone, the thread whose one document carries 5 of the 11
    lexemes comes first; the thread whose turns carry all 11 between them is the answer (the
    threads index ranks it as one text)."""
    page = _search(indexed_world.url, q=SPREAD, repo=REPO.full_name)
    numbers = [h["number"] for h in page["hits"]]
    assert numbers[:2] == [40, 41], numbers
    # shown by the turn its words rank first, the words it carries in its snippet
    top = page["hits"][0]
    assert top["matched_by"] == ["words"]
    assert any(word in top["snippet"].lower() for word in ("padding", "regression", "truncation"))


def test_a_bots_report_never_lends_its_words_to_a_threads_whole_text(indexed_world, tier_off):
    """A bot's comment holding every word of the query is the machine tier: neither it nor
    its thread answers at the default trust floor."""
    page = _search(indexed_world.url, q=SPREAD, repo=REPO.full_name)
    assert 42 not in [h["number"] for h in page["hits"]], page["hits"]
