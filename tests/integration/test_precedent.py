"""``relore precedent``: the earlier pull requests that made the same kind of change, merged
first, on a small history landed by the real writer and built by dbt in the shared world —
with distractors: a pull request of the same kind closed without merging, an issue about the
same problem, an open pull request of the same kind, a merged one of another kind, and one
that shares only a file."""

from __future__ import annotations

import io
import json

import psycopg
import pytest
from fixtures import indexed
from fixtures import world as worlds
from fixtures.reads import read
from starlette.testclient import TestClient

from relore.client import cli as client_cli
from relore.client import mcp_server
from relore.contract.version import __version__
from relore.operate import database
from relore.serve import precedent as precedent_mod
from relore.serve.app import Settings, create_app
from relore.serve.semantic import fusion

REPO, REPO_ID = "acme/precedent", 5151
DESCRIPTION = (
    "Turn off the decoder key/value cache when gradient checkpointing is enabled during "
    "training, and warn the user once."
)
FILE = "src/models/decoder.py"

# number: (title, body, state, merged, changed files)
THREADS = {
    1: ("Disable use_cache with gradient checkpointing in the decoder",
        "Gradient checkpointing recomputes activations; keeping the key/value cache during "
        "training breaks the backward pass. Turn caching off and warn once.",
        "closed", True, [FILE, "tests/test_decoder.py"]),
    2: ("Turn off caching under gradient checkpointing for the seq2seq model",
        "Same as #1 for the seq2seq model: the cache cannot work with checkpointing in "
        "training.", "closed", True, ["src/models/seq2seq.py"]),
    3: ("Disable the decoder cache when gradient checkpointing",
        "An alternative that turns the decoder cache off silently during training with "
        "gradient checkpointing.", "closed", False, [FILE]),
    4: ("Decoder crashes with gradient checkpointing and the cache in training",
        "The decoder cache breaks gradient checkpointing during training.", "closed", None, []),
    5: ("Add a French translation of the documentation",
        "Translate the training guide into French.", "closed", True, ["docs/fr/guide.md"]),
    6: ("Disable the decoder cache under gradient checkpointing for vision",
        "Turn the decoder cache off when gradient checkpointing in training.", "open", False,
        [FILE]),
    7: ("Refactor attention masks", "Move mask building into a helper.", "closed", True, [FILE]),
}  # fmt: skip
# review comments: (id, number, path, line, body)
REVIEWS = [
    (7101, 1, FILE, 40, "Warn only once: use logger.warning_once so training logs stay readable."),
    (7102, 1, "tests/test_decoder.py", 3, "nit: rename this"),
    (7103, 3, FILE, 12, "Silently turning the cache off will surprise users; warn instead."),
    (7104, 7, FILE, 8, "The helper should keep the mask dtype."),
]


def _user(login: str) -> dict:
    return {"login": login, "id": sum(map(ord, login)), "type": "User"}


def _land(conn, object_type: str, object_id: int, number: int, payload: dict) -> None:
    indexed.land_raw(conn, REPO, REPO_ID, object_type, object_id, number, payload)


def _seed(conn) -> None:
    conn.execute(
        "insert into ops.repos (repo_id, full_name, owner_login, owner_type)"
        " values (%s, %s, 'acme', 'Organization')",
        (REPO_ID, REPO),
    )
    file_id = 0
    for number, (title, body, state, merged, files) in THREADS.items():
        when = f"2022-0{number}-01T00:00:00Z"
        kind = "issues" if merged is None else "pull"
        issue = {
            "id": 9000 + number, "number": number, "title": title, "state": state,
            "body": body, "user": _user("maint"), "author_association": "OWNER",
            "labels": [], "comments": 0, "created_at": when, "updated_at": when,
            "html_url": f"https://github.com/{REPO}/{kind}/{number}",
        }  # fmt: skip
        if merged is not None:
            issue["pull_request"] = {"merged_at": when if merged else None}
        _land(conn, "issue", 9000 + number, number, issue)
        if merged is None:
            continue
        _land(conn, "pull", 5000 + number, number, {
            "id": 5000 + number, "number": number, "state": state, "merged": merged,
            "merged_at": when if merged else None, "merge_commit_sha": f"{number:040d}",
            "head": {"sha": f"{number + 10:040d}", "ref": f"branch-{number}"},
            "base": {"sha": "0" * 40, "ref": "main"}, "changed_files": len(files),
            "additions": 1, "deletions": 1,
        })  # fmt: skip
        for path in files:
            file_id += 1
            _land(conn, "pull_file", file_id, number, {
                "filename": path, "status": "modified", "additions": 1, "deletions": 0,
            })  # fmt: skip
    for comment_id, number, path, line, body in REVIEWS:
        _land(conn, "review_comment", comment_id, number, {
            "id": comment_id, "pull_request_review_id": 8000 + number, "body": body,
            "path": path, "line": line, "original_line": line, "side": "RIGHT",
            "commit_id": "e" * 40, "original_commit_id": "e" * 40, "diff_hunk": "@@ -1 +1 @@",
            "user": _user("reviewer"), "author_association": "OWNER",
            "html_url": f"https://github.com/{REPO}/pull/{number}#discussion_r{comment_id}",
            "pull_request_url": f"https://api.github.com/repos/{REPO}/pulls/{number}",
            "created_at": "2022-08-01T00:00:00Z", "updated_at": "2022-08-01T00:00:00Z",
        })  # fmt: skip


def _land_world(landing: worlds.Landing) -> None:
    with psycopg.connect(landing.url, autocommit=True) as conn:
        _seed(conn)


WORLD_PART = worlds.Part(REPO, land=_land_world)


def _precedent(url: str, **params) -> dict:
    params.setdefault("repo", REPO)
    return read(
        url, lambda conn: precedent_mod.precedent(conn, precedent_mod.parse_request(params))
    )


def _numbers(page: dict) -> list[int]:
    return [hit["number"] for hit in page["hits"]]


@pytest.fixture
def api(indexed_world):
    reader = database.reader_url(indexed_world.url, env={})
    with TestClient(create_app(Settings(reader)), base_url="http://127.0.0.1") as client:
        client.headers["x-relore-client"] = __version__
        yield client


def test_precedent_returns_merged_pull_requests_of_the_same_kind_first(indexed_world):
    page = _precedent(indexed_world.url, q=DESCRIPTION)
    numbers = _numbers(page)
    assert numbers[:2] in ([1, 2], [2, 1]), numbers
    assert all(hit["merged"] for hit in page["hits"][:2])
    assert page["counted"] == "closed pull requests" and page["returned"] == len(numbers)


def test_a_pull_request_closed_without_merging_ranks_after_the_merged_ones(indexed_world):
    page = _precedent(indexed_world.url, q=DESCRIPTION)
    numbers = _numbers(page)
    assert 3 in numbers and numbers.index(3) > max(numbers.index(1), numbers.index(2))
    (unmerged,) = [hit for hit in page["hits"] if hit["number"] == 3]
    assert unmerged["merged"] is False and unmerged["state"] == "closed"
    assert page["closed_unmerged"] >= 1


def test_an_issue_never_appears_and_an_open_pull_request_is_not_precedent(indexed_world):
    for params in ({"q": DESCRIPTION}, {"q": DESCRIPTION, "file": FILE}, {"q": "decoder crashes"}):
        page = _precedent(indexed_world.url, **params)
        assert 4 not in _numbers(page) and 6 not in _numbers(page), params
        assert all(hit["kind"] == "pr" for hit in page["hits"])


def test_a_pull_request_of_another_kind_ranks_after_those_of_the_same_kind(indexed_world):
    page = _precedent(indexed_world.url, q=DESCRIPTION)
    numbers = _numbers(page)
    if 5 in numbers:  # it shares one word (training): on the page only after the others
        assert numbers.index(5) > max(numbers.index(n) for n in (1, 2, 3))


def test_a_named_file_is_evidence_that_boosts_never_a_filter(indexed_world):
    plain = _precedent(indexed_world.url, q=DESCRIPTION)
    named = _precedent(indexed_world.url, q=DESCRIPTION, file=FILE)
    assert 7 not in _numbers(plain)  # shares no word
    (shared,) = [hit for hit in named["hits"] if hit["number"] == 7]
    assert shared["matched_by"] == ["files"] and shared["why"]["files"] == [FILE]
    assert _numbers(named)[0] == 1  # merged, its words and its file
    assert 2 in _numbers(named)  # never a filter: #2 changed another file
    first = named["hits"][0]
    assert first["files"]["paths"][0] == {"path": FILE, "change": "modified", "named": True}
    assert first["files"]["total"] == 2 and "files" in first["matched_by"]


def test_a_path_named_in_the_description_counts_as_evidence(indexed_world):
    page = _precedent(indexed_world.url, q=f"Move the mask helper out of {FILE}")
    assert page["named"]["files"] == [FILE]
    assert 7 in _numbers(page)
    (hit,) = [h for h in page["hits"] if h["number"] == 7]
    assert hit["why"]["files"] == [FILE]


def test_each_hit_says_why_it_matched_and_shows_the_review_comments_that_shaped_it(
    indexed_world,
):
    page = _precedent(indexed_world.url, q=DESCRIPTION, file=FILE)
    (first,) = [hit for hit in page["hits"] if hit["number"] == 1]
    assert {"cach", "checkpoint", "gradient", "train"} <= set(first["why"]["terms"])
    assert first["matched"].startswith(f"carries {len(first['why']['terms'])} of ")
    assert first["snippet"].startswith("> ") and "checkpointing" in first["snippet"]
    reviews = first["reviews"]
    assert reviews["total"] == 2 and reviews["returned"] == 2
    top = reviews["comments"][0]  # on the named file, carrying the words
    assert top["id"] == "review_comment:7101" and top["path"] == FILE and top["line"] == 40
    assert top["on_named_file"] is True and top["text"].startswith("> Warn only once")


def test_the_page_holds_at_most_five_and_a_caller_may_ask_for_fewer(indexed_world, api):
    page = _precedent(indexed_world.url, q=DESCRIPTION, file=FILE)
    assert page["returned"] == 5 and page["total"] >= 5 and page["cap"] == 5
    fewer = _precedent(indexed_world.url, q=DESCRIPTION, limit="2")
    assert (
        fewer["returned"] == 2
        and fewer["total"] == _precedent(indexed_world.url, q=DESCRIPTION)["total"]
    )
    response = api.get("/api/v1/precedent", params={"q": DESCRIPTION, "repo": REPO, "limit": 6})
    assert response.status_code == 400 and "limit" in response.json()["error"]


@pytest.mark.parametrize(
    "params",
    [
        {"repo": REPO},  # nothing described
        {"q": "...", "repo": REPO},  # no word
        {"q": DESCRIPTION},  # no repository
        {"q": DESCRIPTION, "repo": "not a repo"},
        {"q": "x" * 2001, "repo": REPO},
        {"q": DESCRIPTION, "repo": REPO, "limit": "0"},
        {"q": DESCRIPTION, "repo": REPO, "file": ["a", "b", "c", "d", "e", "f"]},
    ],
)
def test_http_refuses_bad_input_with_one_line_and_a_400(api, params):
    response = api.get("/api/v1/precedent", params=params)
    assert response.status_code == 400, response.text
    assert "\n" not in response.json()["error"]


def test_an_unindexed_repository_is_a_404_never_an_empty_page(api):
    response = api.get("/api/v1/precedent", params={"q": DESCRIPTION, "repo": "acme/nothing"})
    assert response.status_code == 404


def test_nothing_matching_is_an_empty_page_that_says_so(indexed_world):
    page = _precedent(indexed_world.url, q="zanthoxylum quokka")
    assert page["hits"] == [] and page["returned"] == 0 and page["total"] == 0
    assert "no_matches" in {n["kind"] for n in page["notices"]}


def test_with_the_semantic_tier_off_the_page_ranks_by_words_and_says_so(indexed_world, monkeypatch):
    monkeypatch.setattr(fusion, "ENABLED", False)
    page = _precedent(indexed_world.url, q=DESCRIPTION)
    assert page["tiers"]["meaning"]["state"] == "off"
    assert "RELORE_SEMANTIC=off" in page["tiers"]["meaning"]["reason"]
    (said,) = [n for n in page["notices"] if n["kind"] == "semantic"]
    assert said["text"].startswith("by words and files only; the semantic tier is off")
    assert _numbers(page)[:2] in ([1, 2], [2, 1])


def _relore(api: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = client_cli.main(list(argv), env={"RELORE_API": api}, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def daemon(indexed_world):
    with indexed_world.serving() as base_url:
        yield base_url


def test_the_cli_prints_the_page_as_text_and_as_json(daemon):
    argv = ["precedent", DESCRIPTION, "--repo", REPO, "--file", FILE]
    code, out, err = _relore(daemon, *argv, "--json")
    assert code == 0, err
    page = json.loads(out)
    assert page["hits"][0]["number"] == 1 and page["envelope"]
    code, text, err = _relore(daemon, *argv)
    assert code == 0, err
    assert f"in {REPO}: 5 of" in text and f"1. {REPO}#1 pr merged — ⟦" in text
    assert "   > " in text and f"on ⟦{FILE}⟧:40" in text
    assert "(named)" in text and "matched: carries" in text


def test_the_cli_refuses_more_than_five_before_sending(capsys):
    code, _, _ = _relore("http://127.0.0.1:9", "precedent", DESCRIPTION, "--repo", REPO,
                         "--limit", "6")  # fmt: skip
    assert code == 2 and "at most 5 pull requests" in capsys.readouterr().err


def test_the_mcp_tool_answers_with_the_text_and_page_the_cli_prints(daemon):
    tools = mcp_server.Tools({"RELORE_API": daemon})
    page, text = tools.call("precedent", {"q": DESCRIPTION, "repo": REPO, "file": [FILE]}, "s")
    code, out, _ = _relore(daemon, "precedent", DESCRIPTION, "--repo", REPO, "--file", FILE)
    assert code == 0 and text == out.rstrip("\n")
    assert page["hits"][0]["number"] == 1
    (definition,) = [d for d in tools.definitions() if d["name"] == "precedent"]
    schema = definition["input_schema"]
    assert schema["required"] == ["q", "repo"] and schema["properties"]["limit"]["maximum"] == 5
