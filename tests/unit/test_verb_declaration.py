"""One declaration per verb (``contract/verbs``): the command line, the MCP tools, the daemon's
request parsing and the OpenAPI document are all made from it. A parameter added to a
declaration shows up on all four (and the client sends it); no surface has a verb or a
parameter the declarations lack."""

from __future__ import annotations

import argparse

import pytest
from starlette.datastructures import QueryParams
from starlette.routing import Route

from relore.client import cli, mcp_server
from relore.client.definition import build_parser
from relore.client.exits import Refused
from relore.contract import verbs
from relore.serve import inputs, openapi
from relore.serve.app import Settings, create_app
from relore.serve.errors import BadRequest

ENV = {"RELORE_API": "http://127.0.0.1:9"}
PREFIX = "/api/v1/"
# routes that are no verb: labelling (the page at /) and the document itself
NOT_VERBS = {"/api/v1/label", "/api/v1/openapi.json"}


def _verb_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return action.choices


def _cli_names(parser: argparse.ArgumentParser) -> list[str]:
    return [a.dest for a in parser._actions if a.dest != "help"]


def _operation(document: dict, verb: verbs.Verb) -> dict:
    return document["paths"][PREFIX + verb.route]["get"]


@pytest.fixture
def label(monkeypatch):
    """search with one more parameter, declared in one place only."""
    extra = verbs.Param("label", "text", "threads carrying this --label", most=40)
    monkeypatch.setitem(verbs.VERBS, "search", verbs.VERBS["search"].adding(extra))
    return extra


def test_a_parameter_declared_once_is_on_the_command_line_over_http_over_mcp_and_in_openapi(
    label,
):
    # the command line: parsed, its limit refused before anything is sent, and sent
    args = build_parser().parse_args(["search", "flaky", "--label", "bug"])
    assert args.label == "bug"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["search", "flaky", "--label", "w" * 41])
    route, sent = cli.request(args, ENV)
    assert (route, sent["label"]) == ("search", "bug")
    # the daemon's parsing: read, and refused past its limit with a 400
    assert inputs.parse("search", QueryParams({"q": "flaky", "label": "bug"}))["label"] == "bug"
    with pytest.raises(BadRequest):
        inputs.parse("search", QueryParams({"q": "flaky", "label": "w" * 41}))
    # the MCP tool: in its schema, and a call's argument reaches the parser
    tools = mcp_server.Tools(ENV)
    (search,) = [d for d in tools.definitions() if d["name"] == "search"]
    assert search["input_schema"]["properties"]["label"] == {
        "type": "string",
        "maxLength": 40,
        "description": "threads carrying this label",
    }
    words = mcp_server.argv("search", {"q": "flaky", "label": "bug"})
    assert tools.parser.parse_args(words).label == "bug"
    # the OpenAPI document
    (documented,) = [
        p
        for p in _operation(openapi.document(), verbs.VERBS["search"])["parameters"]
        if p["name"] == "label"
    ]
    assert documented["schema"] == {"type": "string", "maxLength": 40}
    assert documented["in"] == "query" and documented["required"] is False


def test_a_repeated_parameter_declared_once_repeats_on_every_surface(monkeypatch):
    extra = verbs.Param("label", "many", "a --label", values=2, most=40)
    monkeypatch.setitem(verbs.VERBS, "search", verbs.VERBS["search"].adding(extra))
    args = build_parser().parse_args(["search", "x", "--label", "a", "--label", "b"])
    assert cli.request(args, ENV)[1]["label"] == ["a", "b"]
    with pytest.raises(Refused):  # three values: refused before a request is made
        argv = ["search", "x", "--label", "a", "--label", "b", "--label", "c"]
        cli.request(build_parser().parse_args(argv), ENV)
    params = QueryParams([("q", "x"), ("label", "a"), ("label", "b")])
    assert inputs.parse("search", params)["label"] == ("a", "b")
    with pytest.raises(BadRequest):
        inputs.parse("search", QueryParams([("q", "x"), *(("label", v) for v in "abc")]))
    (search,) = [d for d in mcp_server.Tools(ENV).definitions() if d["name"] == "search"]
    assert search["input_schema"]["properties"]["label"]["maxItems"] == 2
    (documented,) = [
        p
        for p in _operation(openapi.document(), verbs.VERBS["search"])["parameters"]
        if p["name"] == "label"
    ]
    assert documented["explode"] is True and documented["schema"]["type"] == "array"


def test_every_verb_is_on_each_of_its_surfaces_and_no_surface_has_one_of_its_own():
    parsers = _verb_parsers(build_parser())
    assert list(parsers) == list(verbs.VERBS)  # the command line: every verb, in order
    tools = {d["name"]: d for d in mcp_server.Tools(ENV).definitions()}
    assert set(tools) == {v.name for v in verbs.VERBS.values() if v.purpose}
    assert set(tools) == set(verbs.VERBS) - {"mcp"}  # every verb but mcp is a tool
    document = openapi.document()
    routed = {PREFIX + v.route: v for v in verbs.VERBS.values() if v.route}
    assert set(document["paths"]) - NOT_VERBS == set(routed)
    app = create_app(Settings("postgresql://nobody@/nothing?host=/nonexistent"))
    served = {r.path for r in app.routes if isinstance(r, Route) and r.path.startswith(PREFIX)}
    assert served - NOT_VERBS == set(routed)
    # the code lens's verbs run where the caller is: no route, a tool and a command
    assert {v.name for v in verbs.VERBS.values() if not v.route} == {"map", "defs", "refs", "mcp"}


@pytest.mark.parametrize("name", list(verbs.VERBS))
def test_each_surface_takes_exactly_the_parameters_declared_for_it(name):
    verb = verbs.VERBS[name]
    parser = _verb_parsers(build_parser())[name]
    assert _cli_names(parser) == [p.dest for p in verb.on("cli")]
    tools = {d["name"]: d for d in mcp_server.Tools(ENV).definitions()}
    if verb.purpose:
        properties = tools[name]["input_schema"]["properties"]
        aliases = [a for p in verb.on("mcp") for a in p.aliases]
        assert list(properties) == [p.dest for p in verb.on("mcp")] + aliases
    if verb.route:
        operation = _operation(openapi.document(), verb)
        assert [p["name"] for p in operation["parameters"]] == [p.name for p in verb.on("http")]
        required = [p["name"] for p in operation["parameters"] if p["required"]]
        assert required == [p.name for p in verb.on("http") if p.required_on("http")]


def test_every_kind_a_declaration_uses_is_parsed_at_both_ends():
    used = {(p.kind, s) for v in verbs.VERBS.values() for s in ("cli", "http") for p in v.on(s)}
    assert {kind for kind, surface in used if surface == "http"} <= set(inputs.KINDS)
    from relore.client import argtypes

    assert {kind for kind, surface in used if surface == "cli"} <= set(argtypes.KINDS)


def test_a_search_names_several_repositories_each_checked_once_and_at_most_the_cap():
    from relore.contract import limits

    got = inputs.parse(
        "search", QueryParams([("q", "x"), ("repo", "a/b"), ("repo", "A/B"), ("repo", "c/d")])
    )
    assert got["repo"] == ["a/b", "c/d"]  # GitHub compares names case-insensitively
    for bad in ("a/b/c", "../x", "a"):
        with pytest.raises(BadRequest, match="owner/name"):
            inputs.parse("search", QueryParams([("q", "x"), ("repo", "a/b"), ("repo", bad)]))
    many = [("repo", f"o/r{i}") for i in range(limits.MAX_SEARCH_REPOS + 1)]
    with pytest.raises(BadRequest, match=f"at most {limits.MAX_SEARCH_REPOS} repositories"):
        inputs.parse("search", QueryParams([("q", "x"), *many]))
    assert inputs.parse("search", QueryParams({"q": "x", "org": "acme"}))["org"] == "acme"
    for bad in ("acme/widgets", "..", "a b"):
        with pytest.raises(BadRequest, match="user or organisation"):
            inputs.parse("search", QueryParams({"q": "x", "org": bad}))
