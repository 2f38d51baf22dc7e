"""Every slot earns its place: a hit is there for its own words, filters mean what they say.

A small repository landed by the real writer and built by dbt in the shared world: a thread
whose replies are "Thanks!"-style noise under a title full of the query's words, and files
whose names differ only where a LIKE wildcard would match."""

from __future__ import annotations

import asyncio
import io
import json
import time

import psycopg
import pytest
import tantivy
from fixtures import corpus_payloads as gh
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import search as _search
from starlette.testclient import TestClient

from relore.contract import render
from relore.extract.landing import RawObject, Repo, land
from relore.operate import cli as operate_cli
from relore.operate import database
from relore.serve import errors, status
from relore.serve.app import Settings, create_app
from relore.serve.lexical import generations, schema, store

REPO = Repo(4545, "acme/evidence")
OWNER = gh.user("acme", 9100, "Organization")
AUTHOR = gh.user("reporter", 9101)
T0 = 1_700_000_000

NOISE = ["Thanks!", "Awesome!", "cc @someone", "it works!", "+1"]


def _issue(number: int, title: str, body: str) -> RawObject:
    return indexed.issue(REPO, number, title, body, author=AUTHOR, at=T0 + number, id_base=60_000)


def _comment(number: int, comment_id: int, body: str) -> RawObject:
    return indexed.issue_comment(REPO, number, comment_id, body, author=AUTHOR, at=T0 + comment_id)


TITLED = _issue(
    1,
    "Tokenizer padding crashes batched generation",
    "Calling generate on a left batch fails, see src/pkg/my_mod.py for the call.",
)
REPLIES = [_comment(1, 700 + i, text) for i, text in enumerate(NOISE)]
EXPLAINED = _comment(1, 710, "The tokenizer padding side must be left for batched generation.")
LOOKALIKE = _issue(2, "Unrelated loader", "The loader lives in src/pkg/myXmod.py and works.")
SYMBOLED = _issue(3, "Config reader", "`acme.config.Reader.load` ignores the environment.")
# an error reported in an opening post, then replies that only agree (the newest last)
CHARSET_TRACEBACK = (
    "Parsing a mail without a charset fails:\n\nTraceback (most recent call last):\n"
    '  File "src/pkg/mail.py", line 12, in parse\n    return headers["charset"]\n'
    "KeyError: 'charset'"
)
CHARSET = _issue(4, "Mail parsing fails", CHARSET_TRACEBACK)
AGREED = [_comment(4, 740, "+1, same here."), _comment(4, 741, "Same on 3.12, any news?")]
# and one where a reply carries it, under an opening post that does not
CHARSET_REPLY = [
    _issue(5, "Headers lost on forward", "Forwarding drops the headers."),
    _comment(5, 750, "It fails for me when forwarding:\nKeyError: 'charset'"),
    _comment(5, 751, "Thanks for the report"),
]


MAIL_TRACEBACK = (
    "Upgrading to 3.12 broke parsing of forwarded mail for us, every time:\n\n"
    "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/email/__init__.py", line 37, in message_from_string\n'
    "    return Parser(policy=policy).parsestr(s)\n"
    '  File "/srv/app/mail.py", line 8, in parse\n'
    "    body = msg.get_content()\n"
    "AttributeError: 'Message' object has no attribute 'get_content'"
)
MAILED = _issue(6, "Forwarded mail", MAIL_TRACEBACK)


def _land_world(landing: worlds.Landing) -> None:
    repository = gh.repository(REPO.full_name, REPO.repo_id, OWNER, T0, T0, 6)
    objects = [RawObject("repository", REPO.repo_id, None, repository)]
    objects += [TITLED, *REPLIES, EXPLAINED, LOOKALIKE, SYMBOLED, CHARSET, *AGREED]
    objects += [*CHARSET_REPLY, MAILED]
    landing.land(REPO, objects)


WORLD_PART = worlds.Part(REPO.full_name, land=_land_world)


def test_a_reply_never_fills_a_slot_through_its_threads_title(indexed_world):
    page = _search(indexed_world.url, q="tokenizer padding crashes", repo=REPO.full_name)
    snippets = [h["snippet"] for h in page["hits"]]
    assert page["hits"], page
    assert not any(noise in s for noise in NOISE for s in snippets), snippets
    # the reply that says the words itself is found, on its own text
    widened = _search(indexed_world.url, q="padding side batched", repo=REPO.full_name)
    assert any("padding side must be left" in h["snippet"] for h in widened["hits"])


def test_a_filter_only_page_is_threads_each_shown_by_the_document_carrying_the_signal(
    indexed_world,
):
    """`--error "KeyError: 'charset'"` once listed three comments of one thread, the first
    "+1, same here.": a page with no words is threads, newest first, each by its evidence."""
    for limit in (1, 3, 10):
        page = _search(
            indexed_world.url, error="KeyError: 'charset'", repo=REPO.full_name, limit=limit
        )
        numbers = [h["number"] for h in page["hits"]]
        assert len(numbers) == len(set(numbers)) == min(limit, 2), page["hits"]
        assert (page["counted"], page["total"]) == ("threads", 2)
        for hit in page["hits"]:
            assert "KeyError: 'charset'" in hit["snippet"], hit
            assert "+1" not in hit["snippet"] and "Thanks" not in hit["snippet"], hit
        assert f"{page['returned']} of 2 threads" in render.search_page(page)
    assert numbers == [5, 4]  # newest activity first


def test_a_snippet_is_the_bodys_own_characters_with_every_cut_marked(indexed_world):
    """ts_headline joined touching fragments with ` … ` inside a line, left cuts at either end
    unmarked, and could leave out the error line the comment ends with."""
    for q in ("message attribute get_content", "init message_from_string", "upgrading parser"):
        page = _search(indexed_world.url, q=q, repo=REPO.full_name)
        hit = next(h for h in page["hits"] if h["number"] == 6)
        text = "\n".join(
            line.removeprefix("> ").removeprefix(">") for line in hit["snippet"].splitlines()
        )
        pieces = [p for p in text.replace("\n…\n", " … ").split(" … ") if p.strip("… ")]
        for piece in pieces:
            assert piece.strip("… ") in MAIL_TRACEBACK, (q, piece, text)
        assert text.endswith("AttributeError: 'Message' object has no attribute 'get_content'"), (
            text
        )
        if not MAIL_TRACEBACK.startswith(pieces[0].strip("… ")):
            assert text.startswith("…"), text


def test_the_title_still_finds_the_thread_through_its_opening_post(indexed_world):
    page = _search(indexed_world.url, q="crashes", repo=REPO.full_name)
    assert [(h["number"], h["document_kind"]) for h in page["hits"]] == [(1, "opening_post")]


def test_a_percent_file_filter_matches_no_thread_not_every_thread(indexed_world):
    page = _search(indexed_world.url, q="", file="%", repo=REPO.full_name)
    assert page["hits"] == []
    page = _search(indexed_world.url, q="", file="src/%", repo=REPO.full_name)
    assert page["hits"] == []


def test_an_underscore_in_a_file_filter_is_an_underscore_not_any_character(indexed_world):
    page = _search(indexed_world.url, q="", file="my_mod.py", repo=REPO.full_name)
    assert {h["number"] for h in page["hits"]} == {1}
    page = _search(indexed_world.url, q="", file="pkg/my_mod.py", repo=REPO.full_name)
    assert {h["number"] for h in page["hits"]} == {1}


def test_a_file_filter_matches_by_whole_path_parts_in_either_direction(indexed_world):
    # an absolute path out of a traceback meets the repository's relative one
    absolute = "/home/u/venv/lib/site-packages/src/pkg/my_mod.py"
    page = _search(indexed_world.url, q="", file=absolute, repo=REPO.full_name)
    assert {h["number"] for h in page["hits"]} == {1}
    # a tail that is not a whole path part is another file
    for value in ("mod.py", "y_mod.py", "kg/my_mod.py"):
        page = _search(indexed_world.url, q="", file=value, repo=REPO.full_name)
        assert page["hits"] == [], value


def test_a_symbol_filter_matches_by_whole_name_parts(indexed_world):
    page = _search(indexed_world.url, q="", symbol="load", repo=REPO.full_name)
    assert {h["number"] for h in page["hits"]} == {3}
    page = _search(indexed_world.url, q="", symbol="oad", repo=REPO.full_name)
    assert page["hits"] == []


def test_a_wildcard_symbol_filter_matches_no_thread(indexed_world):
    for value in ("%", "_", "%load", "Reader.%"):
        page = _search(indexed_world.url, q="", symbol=value, repo=REPO.full_name)
        assert page["hits"] == [], value
    page = _search(indexed_world.url, q="", symbol="Reader.load", repo=REPO.full_name)
    assert {h["number"] for h in page["hits"]} == {3}


def _relored(argv: list[str], env: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = operate_cli.main(argv, env=env, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_relored_index_builds_then_finds_nothing_to_do_and_status_says_current(
    indexed_world, tmp_path
):
    env = {
        "RELORE_READER_DATABASE_URL": database.reader_url(indexed_world.url, env={}),
        "RELORE_INDEX_DIR": str(tmp_path / "index"),
    }
    code, out, err = _relored(["index", "--repo", REPO.full_name, "--json"], env)
    assert code == 0, err
    (built,) = json.loads(out)["indexes"]
    with psycopg.connect(indexed_world.url) as conn:
        live = conn.execute(
            "select count(*) from marts.documents where repo_id = %s and not is_deleted",
            (REPO.repo_id,),
        ).fetchone()[0]
    assert (built["action"], built["documents"]) == ("built", live)
    code, out, _ = _relored(["index", "--repo", REPO.full_name], env)
    said = f"{REPO.full_name}: up to date with the marts (shared index) in 0.00 s"
    assert (code, out.strip()) == (0, said)
    code, _, err = _relored(["index", "--repo", "acme/nothing-here"], env)
    assert code == 1 and "acme/nothing-here is not indexed here" in err


def test_relored_index_before_any_build_says_to_run_dbt_build_not_a_traceback(db_url, tmp_path):
    """A migrated database whose marts were never built (or were built by an older release,
    without marts.repositories): one line that says what to run, exit 1."""
    env = {
        "RELORE_READER_DATABASE_URL": database.reader_url(db_url, env={}),
        "RELORE_INDEX_DIR": str(tmp_path / "index"),
    }
    code, out, err = _relored(["index"], env)
    assert code == 1, (out, err)
    assert "run dbt build" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_status_says_whether_the_search_index_is_current(indexed_world):
    _search(indexed_world.url, q="tokenizer", repo=REPO.full_name)  # the index is built

    async def go():
        reader = database.reader_url(indexed_world.url, env={})
        async with await psycopg.AsyncConnection.connect(reader, autocommit=True) as conn:
            return await status.status(conn, REPO.full_name)

    page = asyncio.run(go())
    (repo,) = page["repos"]
    assert repo["search_index"]["state"] == "current"
    assert repo["search_index"]["documents"] > 0
    assert "search index: current (" in render.status_page(page)


def test_an_unwritable_index_directory_is_a_503_that_names_it(indexed_world, tmp_path, monkeypatch):
    blocked = tmp_path / "a-file-not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("RELORE_INDEX_DIR", str(blocked))
    with pytest.raises(errors.Unavailable, match="RELORE_INDEX_DIR") as raised:
        _search(indexed_world.url, q="tokenizer", repo=REPO.full_name)
    assert str(blocked) in raised.value.message


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_a_small_build_refreshes_only_its_threads_and_the_new_words_are_found(
    world_copy, run_dbt, tmp_path
):
    assert _search(world_copy, q="quokka", repo=REPO.full_name)["hits"] == []  # built
    indexes = store.for_connection_url(database.reader_url(world_copy, env={}))
    hits = indexes.results.hits
    assert _search(world_copy, q="quokka", repo=REPO.full_name)["hits"] == []
    assert indexes.results.hits == hits + 1  # the same request at the same marks: cached
    before = _current(indexes)
    threads_before = _threads_held(indexes)
    with (
        psycopg.connect(world_copy, autocommit=True) as conn,
        conn.transaction(),
        conn.cursor() as cur,
    ):
        said = "A quokka chewed through the loader in src/pkg/quokka_io.py."
        land(cur, REPO, "test", [_comment(2, 720, said)])
    run_dbt(world_copy, tmp_path, "build")
    page = _search(world_copy, q="quokka", repo=REPO.full_name)
    assert [(h["number"], h["document_id"]) for h in page["hits"]] == [(2, "issue_comment:720")]
    # the thread's new file is a filter term now (on every document of the thread): a page
    # of threads, the thread shown by the comment that names the file
    page = _search(world_copy, q="", file="quokka_io.py", repo=REPO.full_name)
    assert [h["document_id"] for h in page["hits"]] == ["issue_comment:720"]
    after = _current(indexes)
    # the same generation, refreshed in place: one thread re-read, not the repository
    assert after.generation == before.generation
    assert after.refreshed_at > before.refreshed_at and after.marks != before.marks
    # the other threads' documents are still there, unchanged
    assert [h["number"] for h in _search(world_copy, q="crashes", repo=REPO.full_name)["hits"]] == [
        1
    ]
    # the thread's whole text (the threads index) was re-read with it: replaced, not doubled
    assert _threads_held(indexes) == threads_before
    threads = indexes.reader(REPO.repo_id).thread_searcher()
    quokka = tantivy.Query.term_query(schema.SCHEMA, schema.TEXT, "quokka")
    assert threads.search(quokka, limit=1, count=True).count == 1


def _current(indexes) -> generations.Current:
    """What the repository's index was last built or refreshed to (its own, or its place in
    the shared index)."""
    reader = indexes.reader(REPO.repo_id)
    reader.searcher()  # reads current.json
    return reader.current


def _threads_held(indexes) -> int:
    """The repository's thread documents in its threads index."""
    threads = indexes.reader(REPO.repo_id).thread_searcher()
    return threads.search(tantivy.Query.all_query(), limit=1, count=True).count


def test_a_thread_whose_signals_alone_moved_is_re_read(world_copy):
    """A signal mart written without its thread's documents moving (a pull request's changed
    files) still reaches the index: the refresh follows every mart's written_at."""
    assert _search(world_copy, q="", file="solo.py", repo=REPO.full_name)["hits"] == []
    with psycopg.connect(world_copy, autocommit=True) as conn:
        conn.execute(
            """insert into marts.thread_files
                (repo_id, thread_number, path, source, change_type, source_loaded_at, written_at)
            values (%s, 3, 'lonely/solo.py', 'changed_file', 'added', now(), now())""",
            (REPO.repo_id,),
        )
    page = _search(world_copy, q="", file="solo.py", repo=REPO.full_name)
    assert {h["number"] for h in page["hits"]} == {3}


def test_marts_older_than_the_daemon_are_a_503_that_says_how_to_upgrade(world_copy):
    """A release whose marts gained a column, served before the one full-refresh build: the
    search says what to run, not a bare database error name."""
    from starlette.testclient import TestClient

    from relore.contract.version import __version__
    from relore.serve.app import Settings, create_app

    with psycopg.connect(world_copy, autocommit=True) as conn:
        conn.execute("alter table marts.thread_files drop column written_at")
    reader = database.reader_url(world_copy, env={})
    with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
        answer = client.get(
            "/api/v1/search",
            params={"q": "loader", "repo": REPO.full_name},
            headers={"x-relore-client": __version__},
        )
    assert answer.status_code == 503
    assert "--full-refresh --select" in answer.json()["error"]


def _ready_until(client, settled, seconds: float = 90.0):
    """GET /readyz until ``settled(response)`` holds (the index builds in the background)."""
    deadline = time.monotonic() + seconds
    while True:
        response = client.get("/readyz")
        if settled(response) or time.monotonic() > deadline:
            return response
        time.sleep(0.2)


def test_readyz_refuses_traffic_until_this_daemons_index_is_built(
    indexed_world, tmp_path, monkeypatch
):
    """A new pod's index directory is empty: /healthz said ready, and the load balancer sent
    it searches that each waited out an index build. /readyz is 503 until every index is
    built (building them meanwhile), names no repository, and leaves /healthz alone."""
    monkeypatch.setenv("RELORE_INDEX_DIR", str(tmp_path / "a-new-pods-index"))
    with psycopg.connect(indexed_world.url) as conn:
        held = conn.execute("select count(*) from marts.corpus_stats").fetchone()[0]
    app = create_app(Settings(database.reader_url(indexed_world.url, env={})))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        first = client.get("/readyz")
        assert client.get("/healthz").status_code == 200
        ready = _ready_until(client, lambda r: r.status_code == 200)
    assert first.status_code == 503, first.text
    assert first.headers["retry-after"] == "5"
    assert f"of {held} repositories not built" in first.json()["error"]
    assert ready.status_code == 200, ready.text
    page = ready.json()
    assert (page["ready"], page["repositories"]) == (True, held)
    assert page["indexes"] == {"current": held, "refreshing": 0}
    assert page["replica"] == {"standby": False}
    assert REPO.full_name not in first.text + ready.text


def test_readyz_says_why_the_index_cannot_be_built(indexed_world, tmp_path, monkeypatch):
    blocked = tmp_path / "a-file-not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("RELORE_INDEX_DIR", str(blocked))
    app = create_app(Settings(database.reader_url(indexed_world.url, env={})))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        said = _ready_until(client, lambda r: "RELORE_INDEX_DIR" in r.text, seconds=30)
    assert said.status_code == 503
    assert "last attempt: the search index cannot be written" in said.json()["error"]
