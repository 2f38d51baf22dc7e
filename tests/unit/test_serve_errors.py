"""One error path in serve: every refusal is a ``RequestError`` answered by one handler with
one body shape, every route parses a shape with the same parser (``relore.serve.inputs``),
and no serve query compares a repository by name or re-derives what the marts own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from relore.serve import errors, inputs, responses
from relore.serve.app import Settings, create_app

SERVE = Path(__file__).resolve().parents[2] / "serve"

# Every route that takes a repository, with the other parameters it needs to get that far.
REPO_ROUTES = [
    ("search", {"q": "error"}),
    ("status", {}),
    ("thread", {"number": "1"}),
    ("inflight", {"number": "1"}),
    ("rules", {"file": "a.py"}),
    ("why", {"path": "a.py", "line": "1"}),
    ("code/symbol", {"name": "thing"}),
    ("code/grep", {"pattern": "thing"}),
    ("code/copies", {"name": "Thing"}),
]

# One bad request per route (and per kind of bad): each refused before any query or git.
BAD_REQUESTS = [
    ("search", {"q": "x", "limit": "11"}),
    ("search", {"q": "x", "since": "2024-13-45"}),
    ("search", {"q": "&&&"}),
    ("status", {"repo": "nope"}),
    ("thread", {"repo": "a/b", "number": "one"}),
    ("thread", {"repo": "a/b", "number": "1", "mode": "comment"}),
    ("inflight", {"repo": "a/b"}),
    ("rules", {"repo": "a/b"}),
    ("rules", {"repo": "a/b", "file": "a.py", "max_tokens": "5"}),
    ("why", {"repo": "a/b", "path": "../x", "line": "1"}),
    ("code/symbol", {"repo": "a/b", "name": "no such"}),
    ("code/grep", {"repo": "a/b", "pattern": "x", "limit": "0"}),
    ("code/copies", {"repo": "a/b", "name": ""}),
]


@pytest.fixture
def client(tmp_path):
    # no lifespan: a 400 is said before any route reaches the database or a clone
    app = create_app(
        Settings(
            "postgresql://nobody@/nothing?host=/nonexistent",
            labels_path=str(tmp_path / "labels.jsonl"),
        )
    )
    return TestClient(app, base_url="http://127.0.0.1")


def _refused(response) -> str:
    """The one body shape: JSON, an object whose only key is a one-line `error` string."""
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}, body
    assert isinstance(body["error"], str) and body["error"]
    assert "\n" not in body["error"]
    return body["error"]


@pytest.mark.parametrize(("route", "params"), REPO_ROUTES)
@pytest.mark.parametrize("repo", ["../x", "acme/..", "a/b/c", "nope", " /x"])
def test_every_route_that_takes_a_repo_refuses_one_that_is_not_owner_name(
    client, route, params, repo
):
    response = client.get(f"/api/v1/{route}", params={**params, "repo": repo})
    assert _refused(response) == inputs.REPO_SHAPE


def test_search_with_a_repo_that_would_leave_its_directory_is_a_400_not_a_search(client):
    response = client.get("/api/v1/search", params={"q": "error", "repo": "../x"})
    assert _refused(response) == "repo must be owner/name"


@pytest.mark.parametrize(("route", "params"), BAD_REQUESTS)
def test_every_routes_400_has_the_same_body_shape(client, route, params):
    _refused(client.get(f"/api/v1/{route}", params=params))


@pytest.mark.parametrize(
    "request_",
    [
        {"path": "/api/v1/status?repo=a%00b/c"},  # RefuseNul, before any route
        {"path": "/api/v1/status", "headers": {"host": "evil.example"}},  # RefuseForeignHost
    ],
)
def test_a_middlewares_400_has_the_routes_body_shape(client, request_):
    _refused(client.get(request_["path"], headers=request_.get("headers")))


@pytest.mark.parametrize(
    "body", [b"not json", b"[]", b'{"query": "q", "url": "u", "grade": 7}', b'{"grade": 1}']
)
def test_a_bad_label_is_a_400_of_the_same_shape(client, body):
    response = client.post(
        "/api/v1/label", content=body, headers={"content-type": "application/json"}
    )
    _refused(response)


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"limit": "11"}, "limit must be a whole number from 1 to 10"),
        ({"limit": "ten"}, "limit must be a whole number from 1 to 10"),
        ({"limit": "0"}, "limit must be a whole number from 1 to 10"),
    ],
)
def test_search_and_thread_say_the_same_words_for_the_same_bad_limit(client, params, words):
    search = client.get("/api/v1/search", params={"q": "x", **params})
    thread = client.get("/api/v1/thread", params={"repo": "a/b", "number": "1", **params})
    assert _refused(search) == _refused(thread) == words


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.BadRequest("x"), 400),
        (errors.Unauthorized("x"), 401),
        (errors.Forbidden("x"), 403),
        (errors.NotFound("x"), 404),
        (errors.NotIndexed("x", indexed=["a/b"]), 404),
        (errors.TooLarge("x"), 413),
        (errors.UnsupportedMediaType("x"), 415),
        (errors.UpgradeRequired("x"), 426),
        (errors.ClientGone(), 499),
        (errors.Unavailable("x", retry_after=5), 503),
    ],
)
def test_every_refusal_is_answered_with_its_status_and_the_one_body(error, status):
    response = responses.refusal(error)
    assert response.status_code == status
    assert response.media_type == "application/json"
    assert (response.headers.get("retry-after") is not None) == (error.retry_after is not None)


def test_a_refusal_body_is_sanitised_like_any_page():
    response = responses.refusal(errors.NotFound("a\x1b[31mb\nc\u202e", command="x\ny"))
    body = response.body.decode("utf-8")
    assert "\x1b" not in body and "\u202e" not in body and "\\n" not in body


# --- static: the owners of a concept stay its only owners ---------------------------------------


def _serve_sources() -> dict[str, str]:
    return {str(p.relative_to(SERVE)): p.read_text(encoding="utf-8") for p in SERVE.rglob("*.py")}


def _strings(source: str) -> list[str]:
    return [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]


_BY_NAME = re.compile(r"lower\(\s*(\w+\.)?(target_)?repo\s*\)|\brepo\s*=\s*lower\(", re.I)


def test_no_serve_sql_compares_a_repository_by_name_but_the_one_resolver():
    found = {
        name: [s for s in _strings(source) if _BY_NAME.search(s)]
        for name, source in _serve_sources().items()
    }
    found = {name: hits for name, hits in found.items() if hits}
    assert set(found) == {"repos.py"}, found
    assert len(found["repos.py"]) == 1  # repos.FIND: name -> repo_id, once per request


def test_no_serve_code_rederives_the_state_shown_or_the_opening_posts_tier():
    for name, source in _serve_sources().items():
        assert not re.search(r"""["']merged["']\s+if\b""", source), name
        for text in _strings(source):
            assert "document_kind = 'opening_post' limit 1" not in text, name
            assert not re.search(r"select\s+d\.trust_tier\s+from\s+marts\.documents", text), name


# Exceptions that never become a response as themselves: a token file or session key refused
# at startup, and git's failures, which code/routes.py turns into an errors.Unavailable.
NOT_REFUSALS = {"TokenConfigError", "SessionKeyError", "GitFailed", "GitTimeout", "BudgetSpent"}


def test_serve_defines_no_error_type_outside_the_one_hierarchy():
    refusals = {
        name
        for name in dir(errors)
        if isinstance(getattr(errors, name), type)
        and issubclass(getattr(errors, name), errors.RequestError)
    }
    for name, source in _serve_sources().items():
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.ClassDef) or name == "errors.py":
                continue
            bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
            if bases & refusals or node.name in NOT_REFUSALS:
                continue
            assert not any(re.search(r"Error$|Exception$", b) for b in bases), (
                f"{name}: {node.name}({', '.join(sorted(bases))}) is not an errors.RequestError"
            )
