"""Serving from a hot standby, for real (#17): a primary and a streaming standby from the
embedded Postgres binaries (``operate/replica.py``: ``pg_basebackup -R``, ``primary_conninfo``
on loopback), extract, rules, a clone, ``dbt build`` and ``relored embed`` on the primary,
then ``relored serve`` — a real process over real HTTP — on the standby's reader role, asked
through ``relore``. The standby refuses every write, so every answer below is also proof
that serve wrote nothing: no temporary table, no session write, no index bookkeeping in
Postgres. The search index is a file tree the standby's daemon builds from the standby's own
marts, and refreshes once a later extract and build on the primary has replayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

import psycopg
import pytest
from fixtures import corpus, fake_github
from fixtures import daemon as daemons
from fixtures import world as worlds
from fixtures.gitrepo import git

from relore.client import cli as client_cli
from relore.operate import cli as relored
from relore.operate import database, replica
from relore.serve import status
from relore.serve.app import WHERE_EVERY_S
from relore.serve.lexical import generations

pytestmark = pytest.mark.slow  # dbt builds of its own: make test-fast skips it

REPO = "acme/standby"
BEFORE = "quasarbloom"  # planted before the first build
AFTER = "zephyrquill"  # planted after it: reaches the standby's daemon by replay alone
RULES = """\
- id: retry-budget
  title: Retries are bounded by a budget
  text: Every retry loop takes its budget from the caller; never retry for ever.
  scope: lib/acme/
  triggers: [retry, backoff]
"""
RETRY_PY = '''\
def retry_budget(attempts):
    """How many retries are left."""
    return max(0, 5 - attempts)


# Copied from acme.retry.retry_budget
def retry_budget_again(attempts):
    return max(0, 5 - attempts)
'''
BIN = Path(sys.executable).parent


def _corpus() -> corpus.Corpus:
    w = corpus.generate(seed=17, threads=20, repo=REPO, comments_per_thread=3)
    issue = w.add_issue("Retry budget runs out", f"The {BEFORE} retry budget runs out early.")
    claim = w.add_issue(
        "Bound the retry budget", f"Fixes #{issue['number']}: cap it.", pull_request=True
    )
    w.facts["standby"] = {"issue": issue["number"], "claim": claim["number"]}
    return w


def _relored(argv: list[str], env: dict) -> str:
    out, err = io.StringIO(), io.StringIO()
    code = relored.main(argv, env=env, out=out, err=err)
    assert code == 0, (argv, err.getvalue())
    return out.getvalue()


def _origin(root: Path, claim: int) -> Path:
    """A one-commit repository whose subject names the pull request that carried it."""
    (root / "lib" / "acme").mkdir(parents=True)
    (root / "lib" / "acme" / "retry.py").write_text(RETRY_PY)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(
        root,
        "commit",
        "-q",
        "-m",
        f"Bound the retry budget (#{claim})",
        date="2024-01-01T00:00:00Z",
    )
    return root


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A primary on loopback and its hot standby; both stopped when the module ends."""
    home = tmp_path_factory.mktemp("pair")
    paths = database.EmbeddedPaths(home / "primary")
    database.start_embedded(paths)  # roles, passwords, migrations, pgvector
    primary = replica.serve_on_loopback(paths)
    with contextlib.ExitStack() as stack:
        stack.callback(replica.stop, primary)
        standby = replica.make_standby(primary, home / "standby")
        stack.callback(replica.stop, standby)
        yield primary, standby


@pytest.fixture(scope="module")
def built(pair, tmp_path_factory, run_dbt):
    """Everything written on the primary, as an operator writes it (extract, rules, clone,
    dbt build, embed), then replayed by the standby. The fake GitHub stays up for a poll."""
    primary, standby = pair
    url = primary.writer_url
    w = _corpus()
    clones = tmp_path_factory.mktemp("clones")
    env = {"RELORE_DATABASE_URL": url, "RELORE_CLONES_DIR": str(clones)}
    with fake_github.serve(fake_github.create_app([w])) as api_url:
        worlds.extract(url, api_url, REPO)
        rules = tmp_path_factory.mktemp("rules") / "rules.yaml"
        rules.write_text(RULES)
        _relored(["rules", "load", "--repo", REPO, str(rules)], env)
        origin = _origin(tmp_path_factory.mktemp("origin"), w.facts["standby"]["claim"])
        _relored(["clone", "--repo", REPO, "--url", str(origin), "--json"], env)
        build_dir = tmp_path_factory.mktemp("dbt")
        run_dbt(url, build_dir, "build")
        _relored(["embed", "--json"], env)
        replica.wait_replayed(primary, [standby])
        yield {"corpus": w, "api_url": api_url, "clones": clones, "build_dir": build_dir}


@pytest.fixture(scope="module")
def daemon(pair, built, tmp_path_factory):
    """``relored serve`` on the standby's reader role, over real HTTP; its log kept."""
    _, standby = pair
    work = tmp_path_factory.mktemp("daemon")
    env = {
        **os.environ,
        "RELORE_READER_DATABASE_URL": standby.reader_url,
        "RELORE_CLONES_DIR": str(built["clones"]),
        "RELORE_INDEX_DIR": str(work / "search-index"),
    }
    for name in ("RELORE_DATABASE_URL", "RELORE_API_TOKENS", "RELORE_HOME"):
        env.pop(name, None)
    log = work / "serve.log"
    with daemons.serving(env, log) as base:
        yield {
            "base": base,
            "log": log,
            "index": work / "search-index",
            "port": standby.port,
            "state": work / "client-state",  # the client's session tokens, not ~/.local
        }


def _relore(daemon: dict, *argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_API": daemon["base"], "RELORE_STATE_DIR": str(daemon["state"])}
    code = client_cli.main(list(argv), env=env, stdout=out, stderr=err)
    assert code == 0, (argv, code, err.getvalue())
    return out.getvalue()


def _json(daemon: dict, *argv: str) -> dict:
    return json.loads(_relore(daemon, *argv, "--json"))


def _numbers(page: dict) -> set[int]:
    return {hit["number"] for hit in page["hits"]}


# --- the pair is what it claims ---------------------------------------------------------------


def test_the_standby_is_in_recovery_and_refuses_every_write_even_the_writers(pair, built):
    primary, standby = pair
    with psycopg.connect(primary.writer_url) as conn:
        assert conn.execute("select pg_is_in_recovery()").fetchone()[0] is False
        threads = conn.execute("select count(*) from marts.threads").fetchone()[0]
    with psycopg.connect(standby.superuser_url) as conn:
        conninfo = conn.execute("show primary_conninfo").fetchone()[0]
        assert f"host={replica.LOOPBACK}" in conninfo and f"port={primary.port}" in conninfo
    with psycopg.connect(standby.writer_url, autocommit=True) as conn:
        assert conn.execute("select pg_is_in_recovery()").fetchone()[0] is True
        assert conn.execute("select count(*) from marts.threads").fetchone()[0] == threads > 0
        for statement in (
            "create temporary table scratch (x int)",
            "insert into marts.threads select * from marts.threads limit 1",
        ):
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                conn.execute(statement)  # the writer has no read-only default: recovery refuses


# --- every read verb, from the standby ------------------------------------------------------


def test_search_on_a_standby_builds_its_own_index_from_the_standbys_marts(daemon, built):
    page = _json(daemon, "search", BEFORE, "--repo", REPO)
    assert built["corpus"].facts["standby"]["issue"] in _numbers(page)
    status = _json(daemon, "status", "--repo", REPO)
    (repo,) = status["repos"]
    index = repo["search_index"]
    assert index["state"] == "current" and index["documents"] > 0
    # keyed by the server the daemon reads: the standby's port, never the primary's
    key = generations.database_key(replica.LOOPBACK, daemon["port"], database.DATABASE_NAME)
    assert Path(index["path"]).parent == daemon["index"].resolve() / key


def test_thread_and_inflight_answer_from_a_standby(daemon, built):
    facts = built["corpus"].facts["standby"]
    thread = _json(daemon, "thread", f"{REPO}#{facts['issue']}")
    assert BEFORE in json.dumps(thread)
    inflight = _json(daemon, "inflight", f"{REPO}#{facts['issue']}")
    assert facts["claim"] in {pull["number"] for pull in inflight["pulls"]}
    outline = _relore(daemon, "thread", f"{REPO}#{facts['issue']}", "--outline")
    assert "Retry budget runs out" in outline
    # a standby that keeps up says nothing on the pages (status says where they come from)
    for page in (thread, inflight, _json(daemon, "search", BEFORE, "--repo", REPO)):
        assert "standby_behind" not in {n["kind"] for n in page["notices"]}


def test_precedent_answers_from_a_standby(daemon):
    page = _json(daemon, "precedent", BEFORE, "--repo", REPO)
    assert page["returned"] == len(page["hits"]) <= 5
    assert "standby_behind" not in {n["kind"] for n in page["notices"]}


def test_rules_answer_from_a_standby_never_repeated_within_a_session(daemon):
    argv = ("rules", "lib/acme/retry.py", "--repo", REPO, "--task", "add a retry backoff")
    first = _json(daemon, *argv, "--session", "standby-1")
    assert [rule["id"] for rule in first["rules"]] == ["retry-budget"]
    again = _json(daemon, *argv, "--session", "standby-1")
    assert again["rules"] == [] and again["held_back"]["already_sent"] == 1


def test_why_symbol_grep_and_copies_answer_from_a_standby_and_its_clone(daemon, built):
    claim = built["corpus"].facts["standby"]["claim"]
    why = _json(daemon, "why", "lib/acme/retry.py:3", "--repo", REPO)
    assert why["blame"]["subject"] == f"Bound the retry budget (#{claim})"
    assert why["pull_request"]["number"] == claim  # read from the standby's marts
    symbol = _json(daemon, "symbol", "retry_budget", "--repo", REPO)
    assert symbol["returned"] >= 1
    grep = _json(daemon, "grep", "max\\(0", "--repo", REPO)
    assert grep["total"] == 2
    copies = _json(daemon, "copies", "retry_budget", "--repo", REPO)
    assert copies["returned"] == 1


def test_a_question_is_answered_by_meaning_from_vectors_the_standby_replayed(daemon):
    status = _json(daemon, "status", "--repo", REPO)
    assert status["repos"][0]["semantic"]["state"] == "on"
    page = _json(daemon, "search", "why does the retry budget run out early", "--repo", REPO)
    assert page["tiers"]["semantic"]["state"] == "answered", page["tiers"]


# --- how far behind ---------------------------------------------------------------------------


def test_status_says_the_daemon_reads_a_standby_and_how_far_behind_it_is(daemon):
    where = _json(daemon, "status")["replica"]
    assert where["standby"] is True and where["receiving"] is True
    assert where["replay_lag_s"] is not None and where["replay_lag_s"] >= 0
    assert where["last_replayed_at"]
    assert "reading a hot standby: streaming" in _relore(daemon, "status")


def test_status_on_the_primary_says_it_is_no_standby(pair, built):
    primary, _ = pair

    async def read() -> dict:
        async with await psycopg.AsyncConnection.connect(primary.reader_url) as conn:
            return await status.status(conn, REPO)

    assert asyncio.run(read())["replica"] == {"standby": False}


# --- a later build reaches the standby's daemon ---------------------------------------------


def test_a_later_extract_and_build_on_the_primary_reaches_the_standbys_search(
    pair, built, daemon, run_dbt
):
    primary, standby = pair
    w = built["corpus"]
    number = w.facts["standby"]["issue"]
    before = _json(daemon, "status", "--repo", REPO)["repos"][0]["search_index"]
    assert not _json(daemon, "search", AFTER, "--repo", REPO)["hits"]
    w.add_comment(number, f"Still failing: the {AFTER} path retries for ever.")
    worlds.extract(primary.writer_url, built["api_url"], REPO)
    run_dbt(primary.writer_url, built["build_dir"], "build")
    replica.wait_replayed(primary, [standby])
    page = _json(daemon, "search", AFTER, "--repo", REPO)
    assert _numbers(page) == {number}
    after = _json(daemon, "status", "--repo", REPO)["repos"][0]["search_index"]
    # refreshed in place from the standby's marts, not rebuilt
    assert after["state"] == "current" and after["generation"] == before["generation"]
    assert after["documents"] == before["documents"] + 1


def test_nothing_serve_did_on_the_standby_was_a_refused_write(daemon):
    said = daemon["log"].read_text()
    assert "read-only transaction" not in said and "database error" not in said, said


def test_a_standby_cut_off_from_its_primary_says_it_is_behind(pair, daemon, built):
    primary, _ = pair
    replica.stop(primary)
    where = {}
    for _ in range(100):  # the WAL receiver notices its primary is gone
        where = _json(daemon, "status")["replica"]
        if not where["receiving"]:
            break
        time.sleep(0.1)
    assert where["standby"] is True and where["receiving"] is False and where["behind"] is True
    text = _relore(daemon, "status")
    assert "BEHIND: reading a hot standby: not streaming from its primary" in text
    # and it still answers, each page led by the notice: a standby serves what it has (once
    # the daemon asks again: it keeps where it reads from for WHERE_EVERY_S)
    time.sleep(WHERE_EVERY_S + 0.1)
    page = _json(daemon, "search", AFTER, "--repo", REPO)
    assert page["hits"]
    (behind,) = [n for n in page["notices"] if n["kind"] == "standby_behind"]
    assert behind["place"] == "before" and "not streaming from its primary" in behind["text"]
    text = _relore(daemon, "search", AFTER, "--repo", REPO)
    assert "BEHIND: read from a hot standby not streaming from its primary" in text
    number = built["corpus"].facts["standby"]["issue"]
    for verb in ("thread", "inflight"):
        kinds = [n["kind"] for n in _json(daemon, verb, f"{REPO}#{number}")["notices"]]
        assert kinds[0] == "standby_behind", (verb, kinds)
