"""docs/analysts.md's queries run, as written, on the demo's corpus: they never rot (#16).

The world holds the demo's generated corpus (deploy/local/demo.sh: seed 7, 60 threads) under a
name of its own; every ``sql`` block of the doc runs on the reader role with ``:'repo'`` bound,
and each answer is checked for sense, not only for rows.
"""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
import pytest
from fixtures import corpus
from fixtures import world as worlds
from psycopg.rows import dict_row

from relore.operate import database

REPO = "acme/analyst-demo"
DOC = Path(__file__).resolve().parents[2] / "docs" / "analysts.md"
WORLD_PART = worlds.Part(REPO, corpus=lambda: corpus.generate(seed=7, threads=60, repo=REPO))


def queries() -> dict[str, str]:
    """Each ``## heading`` of the doc -> its sql block."""
    text = DOC.read_text()
    found = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title = section.splitlines()[0].strip()
        block = re.search(r"```sql\n(.*?)```", section, re.S)
        if block:
            found[title] = block.group(1)
    return found


@pytest.fixture(scope="module")
def answers(indexed_world) -> dict[str, list[dict]]:
    reader = database.reader_url(indexed_world.url, env={})
    out = {}
    with psycopg.connect(reader, autocommit=True) as conn:
        for title, sql in queries().items():
            bound = sql.replace(":'repo'", "%(repo)s").rstrip().rstrip(";")
            with conn.cursor(row_factory=dict_row) as cur:
                cur.execute(bound, {"repo": REPO})
                out[title] = cur.fetchall()
    return out


def test_the_doc_holds_the_five_questions_analysts_ask():
    assert set(queries()) == {
        "Threads opened per month",
        "Most discussed files",
        "Most reported errors",
        "Pull requests that closed issues",
        "Time to the first maintainer reply",
    }


def test_threads_per_month_add_up_to_every_thread(answers, indexed_world):
    rows = answers["Threads opened per month"]
    with psycopg.connect(indexed_world.url) as conn:
        (threads,) = conn.execute(
            "select count(*) from marts.threads where repo = %s and not is_deleted", (REPO,)
        ).fetchone()
    assert sum(r["issues"] + r["pull_requests"] for r in rows) == threads > 0


def test_most_discussed_files_are_the_repositorys_not_a_tracebacks(answers):
    rows = answers["Most discussed files"]
    assert rows, "no file discussed"
    outside = [r["path"] for r in rows if r["path"].startswith("/") or "python3." in r["path"]]
    assert outside == [], outside


def test_most_reported_errors_and_closing_pulls_and_first_replies_answer(answers):
    assert answers["Most reported errors"] and answers["Most reported errors"][0]["threads"] >= 1
    closed = answers["Pull requests that closed issues"]
    assert closed and all(r["closed_issue"].lower().startswith(REPO) for r in closed), closed
    [reply] = answers["Time to the first maintainer reply"]
    assert reply["issues_answered"] > 0 and reply["median_hours"] >= 0, reply
