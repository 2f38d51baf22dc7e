"""A pull request that names its repository by a former name still claims the issue.

GitHub answers a renamed (or transferred) repository's old name with a 301 to
/repositories/{id}: `relored extract` asks once for each name the links hold that nothing
resolved, records the answer (ops.repo_names), and inflight counts a claim made through a
former name (marts.repository_names). The fake GitHub redirects as GitHub does (the
recordings in tests/fixtures/github: octokit's rename-repository scenario, PyGithub's
testGetRepositoryWith301Redirect).
"""

from __future__ import annotations

import psycopg
import pytest
from fixtures import corpus, fake_github
from fixtures import world as worlds
from fixtures.reads import read

from relore.serve import thread

pytestmark = pytest.mark.slow

REPO = "acme/widgets"
FORMER = "oldorg/widgets"  # the name links use
LEGACY = "acme/widgets-legacy"  # the name an operator still types


@pytest.fixture(scope="module")
def renamed():
    w = corpus.generate(seed=23, threads=6, repo=REPO, comments_per_thread=1)
    w.former_names += [FORMER, LEGACY]
    issue = w.add_issue("Retries never stop", "The client retries for ever on a 503.")
    claim = w.add_issue(
        "Cap the retries", f"Fixes {FORMER}#{issue['number']}: three at most.", pull_request=True
    )
    w.add_issue("Elsewhere", "Compare nobody/nothing#3 and Fixes elsewhere/gone#4.")
    app = fake_github.create_app([w])
    with fake_github.serve(app) as api_url:
        yield {"app": app, "api": api_url, "issue": issue["number"], "claim": claim["number"]}


def _claims(url: str, number: int) -> set[int]:
    page = read(url, lambda conn: thread.inflight(conn, REPO, number))
    return {pull["number"] for pull in page["pulls"]}


def _asked(app, name: str) -> int:
    return sum(r.path == f"/repos/{name}" for r in app.state.requests)


def test_a_claim_through_a_former_name_is_counted_once_github_names_it(
    renamed, module_db_url, run_dbt, tmp_path
):
    url, api = module_db_url, renamed["api"]
    first = worlds.extract(url, api, REPO)
    assert first["names_asked"] == 0  # no build yet: no links to read
    run_dbt(url, tmp_path, "build")
    # the link holds the name its author typed: nothing answers it yet
    assert renamed["claim"] not in _claims(url, renamed["issue"])

    second = worlds.extract(url, api, REPO)
    assert second["names_asked"] == 3
    with psycopg.connect(url) as conn:
        names = dict(conn.execute("select name, full_name from ops.repo_names").fetchall())
    assert names == {FORMER: REPO, "nobody/nothing": None, "elsewhere/gone": None}
    run_dbt(url, tmp_path, "build")
    assert renamed["claim"] in _claims(url, renamed["issue"])

    # every name is asked once, ever
    assert worlds.extract(url, api, REPO)["names_asked"] == 0
    assert [_asked(renamed["app"], n) for n in (FORMER, "nobody/nothing")] == [1, 1]


def test_an_operator_using_a_former_name_extracts_the_repository_and_records_the_name(
    renamed, module_db_url
):
    report = worlds.extract(module_db_url, renamed["api"], LEGACY)
    assert report["repo"] == REPO
    with psycopg.connect(module_db_url) as conn:
        row = conn.execute(
            "select r.repo_id, n.full_name from ops.repo_names as n"
            " join ops.repos as r on r.repo_id = n.repo_id where n.name = %s",
            (LEGACY,),
        ).fetchone()
    assert row is not None and row[1] == REPO
