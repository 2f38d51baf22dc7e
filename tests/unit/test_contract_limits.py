"""One owner per wire limit: the client refuses what the daemon would refuse, from the same
number (``relore.contract.limits``), and the OpenAPI document states that number."""

from __future__ import annotations

import pytest
from starlette.datastructures import QueryParams

from relore.client.cli import build_parser
from relore.contract import limits
from relore.serve import inputs, openapi, search, thread
from relore.serve.clone import grep
from relore.serve.errors import BadRequest
from relore.serve.rules import routes as rules_routes

# (the client's argv with the value, the daemon's parser and params, the limit)
OVER = [
    (
        ["search", "{v}"],
        search.parse_request,
        {"q": "{v}"},
        limits.MAX_QUERY_CHARS,
    ),
    (
        ["thread", "o/n#1", "--focus", "{v}"],
        thread.parse_request,
        {"repo": "o/n", "number": "1", "focus": "{v}"},
        limits.MAX_FOCUS_CHARS,
    ),
    (
        ["rules", "a.py", "--repo", "o/n", "--task", "{v}"],
        rules_routes.parse,
        {"repo": "o/n", "file": "a.py", "task": "{v}"},
        limits.MAX_TASK_CHARS,
    ),
]


def _fill(template, value: str):
    if isinstance(template, dict):
        return QueryParams({k: v.replace("{v}", value) for k, v in template.items()})
    return [a.replace("{v}", value) for a in template]


@pytest.mark.parametrize(("argv", "daemon", "params", "most"), OVER)
def test_a_value_one_over_a_limit_is_refused_by_the_client_and_the_daemon_alike(
    argv, daemon, params, most
):
    at, over = "w" * most, "w" * (most + 1)
    build_parser().parse_args(_fill(argv, at))
    daemon(_fill(params, at))
    with pytest.raises(SystemExit):
        build_parser().parse_args(_fill(argv, over))
    with pytest.raises(BadRequest):
        daemon(_fill(params, over))


def test_a_session_token_over_the_cap_is_never_sent_and_refused_by_the_daemon(tmp_path):
    from relore.client import rules as client_rules

    most = limits.MAX_SESSION_TOKEN_CHARS
    env = {"RELORE_STATE_DIR": str(tmp_path)}
    for value, kept in (("w" * most, True), ("w" * (most + 1), False)):
        client_rules.keep_token(env, "s", "o/n", value)
        assert (client_rules.stored_token(env, "s", "o/n") == value) is kept
    params = {"repo": "o/n", "file": "a.py", "session": "s"}
    rules_routes.parse(QueryParams({**params, "session_token": "w" * most}))
    with pytest.raises(BadRequest):
        rules_routes.parse(QueryParams({**params, "session_token": "w" * (most + 1)}))


def test_a_page_size_over_the_cap_is_refused_by_the_client_and_the_daemon_alike():
    for argv, daemon, params, most in (
        (["search", "x"], search.parse_request, {"q": "x"}, limits.MAX_HITS),
        (["thread", "o/n#1"], thread.parse_request, {"repo": "o/n", "number": "1"},
         limits.THREAD_PAGE),
    ):  # fmt: skip
        build_parser().parse_args([*argv, "--limit", str(most)])
        daemon(QueryParams({**params, "limit": str(most)}))
        with pytest.raises(SystemExit):
            build_parser().parse_args([*argv, "--limit", str(most + 1)])
        with pytest.raises(BadRequest):
            daemon(QueryParams({**params, "limit": str(most + 1)}))


def test_the_clone_routes_cap_what_the_contract_says():
    most, rows = limits.MAX_PATTERN_CHARS, limits.CLONE_ROWS
    for verb, params in (("grep", {"pattern": "w" * most}), ("copies", {"name": "f"})):
        params = {**params, "repo": "o/n"}
        assert {**params, "limit": rows}.items() <= inputs.parse(verb, params).items()
        with pytest.raises(BadRequest):
            inputs.parse(verb, {**params, "limit": str(rows + 1)})
    with pytest.raises(SystemExit):
        build_parser().parse_args(["grep", "w" * (most + 1), "--repo", "o/n"])
    with pytest.raises(BadRequest):
        grep.parse_grep({"pattern": "w" * (most + 1), "repo": "o/n"})


def test_the_openapi_document_states_the_contracts_limits():
    paths = openapi.document()["paths"]

    def schema(route: str, name: str) -> dict:
        params = paths[f"/api/v1/{route}"]["get"]["parameters"]
        return next(p["schema"] for p in params if p["name"] == name)

    assert schema("search", "q")["maxLength"] == limits.MAX_PASTE_CHARS  # a traceback's
    assert schema("search", "limit")["maximum"] == limits.MAX_HITS
    assert schema("search", "trust")["enum"] == list(limits.TRUST_TIERS)
    assert schema("thread", "focus")["maxLength"] == limits.MAX_FOCUS_CHARS
    assert schema("thread", "limit")["maximum"] == limits.THREAD_PAGE
    assert schema("rules", "task")["maxLength"] == limits.MAX_TASK_CHARS
    assert schema("rules", "max_tokens")["minimum"] == limits.MIN_MAX_TOKENS
    assert schema("rules", "session_token")["maxLength"] == limits.MAX_SESSION_TOKEN_CHARS
    assert schema("code/grep", "pattern")["maxLength"] == limits.MAX_PATTERN_CHARS
    assert schema("code/grep", "limit")["maximum"] == limits.CLONE_ROWS


@pytest.mark.parametrize(
    ("verb", "name"),
    [("symbol", "a.b"), ("symbol", "x" * 201), ("copies", "a." * 16 + "b"), ("copies", "1abc")],
)
def test_a_name_the_daemon_refuses_is_refused_by_the_client_first(verb, name):
    with pytest.raises(SystemExit):
        build_parser().parse_args([verb, name, "--repo", "o/n"])
    with pytest.raises(BadRequest):
        inputs.parse(verb, {"name": name, "repo": "o/n"})
