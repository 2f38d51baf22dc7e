"""A pull request that names its repository by a former name still claims the issue.

GitHub answers a renamed (or transferred) repository's old name with a 301 to
/repositories/{id}: `relored extract` asks once for each name the links hold that nothing
resolved, records the answer (ops.repo_names), and inflight counts a claim made through a
former name (marts.repository_names). The fake GitHub redirects as GitHub does (the
recordings in tests/fixtures/github: octokit's rename-repository scenario, PyGithub's
testGetRepositoryWith301Redirect).
"""

from __future__ import annotations

import io

import psycopg
import pytest
from fixtures import corpus, fake_github
from fixtures import world as worlds
from fixtures.reads import read

from relore.operate import cli as relored
from relore.serve import status as serve_status
from relore.serve import thread
from relore.serve.rules import routes as rules_routes

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


# A repository renamed between two extracts: the operator loaded its rules under the name it
# had, GitHub now answers that name with a 301, and the second extract records the new one.
BEFORE = "acme/gizmos"
AFTER = "Acme/Gadgets"  # GitHub's spelling; callers type it in any case

RULES = """\
- id: timeouts
  title: Explicit timeouts on outbound HTTP
  text: Every outbound HTTP call sets an explicit timeout.
  scope: global
  triggers: [timeout, http]
"""


def _rename(app, before: str, after: str) -> None:
    """GitHub renames the repository: its new name answers, the old one redirects."""
    with app.state.lock:
        made = app.state.corpora.pop(before.lower())
        made.full_name = made.repo_payload["full_name"] = after
        made.former_names.append(before)
        app.state.corpora[after.lower()] = made


def _rules_served(url: str, repo: str) -> list[str]:
    rows = read(url, lambda conn: rules_routes.rules_rows(conn, repo))
    return sorted(r["rule_id"] for r in rows)


def test_a_repository_renamed_between_extracts_keeps_its_rules_and_answers_its_new_name(
    module_db_url, run_dbt, tmp_path
):
    url = module_db_url
    made = corpus.generate(seed=23, threads=6, repo=BEFORE, comments_per_thread=1)
    app = fake_github.create_app([made])
    path = tmp_path / "rules.yaml"
    path.write_text(RULES, encoding="utf-8")
    with fake_github.serve(app) as api:
        worlds.extract(url, api, BEFORE)
        env = {"RELORE_DATABASE_URL": url}
        out, err = io.StringIO(), io.StringIO()
        code = relored.main(
            ["rules", "load", "--repo", BEFORE, str(path)], env=env, out=out, err=err
        )
        assert code == 0, err.getvalue()
        run_dbt(url, tmp_path, "build")
        assert _rules_served(url, BEFORE) == ["timeouts"]

        _rename(app, BEFORE, AFTER)
        assert worlds.extract(url, api, AFTER.lower())["repo"] == AFTER
        run_dbt(url, tmp_path, "build")

    # the repository answers its new name, in any case, and its rules follow it
    status = read(url, lambda conn: serve_status.status(conn, AFTER.upper()))
    assert [r["repo"] for r in status["repos"]] == [AFTER]
    assert _rules_served(url, AFTER.lower()) == ["timeouts"]
    assert _rules_served(url, AFTER) == ["timeouts"]
