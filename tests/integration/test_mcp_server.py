"""``relore mcp`` driven by the MCP SDK's own client over stdio, against a running daemon.

The world holds the demo's corpus (``make demo``: seed 7, 60 threads, its planted prompt
injections), a thread of hostile strings (``tests/fixtures/hostile_strings.py``) landed by
hand, a working clone and a rules file. Each test starts ``python -m relore.client mcp`` as
a harness does, lists or calls its tools, and compares what a tool says with what
``relore`` prints for the same verb: one renderer, one request builder, one mapping of
failures to messages and exit statuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import threading
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from fixtures import corpus, indexed
from fixtures import hostile_strings as H
from fixtures import world as worlds
from mcp import Client, StdioServerParameters

from relore.client import cli as client_cli
from relore.client import mcp_server
from relore.contract import verbs, wire
from relore.operate import cli as relored

pytestmark = pytest.mark.slow

REPO = "acme/mcp-demo"
HOSTILE_FIRST = 900  # the hand-landed hostile threads: 900, 901, ...
HOSTILE = H.CATALOG[:12]
TREE = Path(__file__).resolve().parents[1] / "fixtures" / "code" / "python"
RULES = textwrap.dedent(
    """\
    - id: money-decimal
      title: Money is Decimal, never float
      text: Amounts are decimal.Decimal end to end; never compare money with == on floats.
      scope: src/shop/
      triggers: [price, refund]
      created: 2025-01-31
    """
)
CART = textwrap.dedent(
    """\
    class Cart:
        def total(self, items):
            return sum(item.price for item in items)
    """
)
COPY = "# Copied from src.shop.cart.Cart\nclass WishList:\n    pass\n"


@functools.cache
def _corpus() -> corpus.Corpus:
    """The demo's corpus (deploy/local/demo.sh: --seed 7 --threads 60) under this name."""
    return corpus.generate(seed=7, threads=60, repo=REPO)


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ann Author",
        "GIT_AUTHOR_EMAIL": "ann@example.com",
        "GIT_COMMITTER_NAME": "Ann Author",
        "GIT_COMMITTER_EMAIL": "ann@example.com",
        "GIT_AUTHOR_DATE": "2021-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2021-01-01T00:00:00Z",
    }
    result = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)
    return result.stdout.decode().strip()


def _user(login: str) -> dict:
    return {"login": login, "id": sum(map(ord, login)) % 10_000_000, "type": "User"}


def _land_hostile(url: str) -> None:
    repo_id = _corpus().repo_id
    with psycopg.connect(url, autocommit=True) as conn:
        for k, (_, text) in enumerate(HOSTILE):
            number, when = HOSTILE_FIRST + k, f"2021-03-{1 + k:02d}T00:00:00Z"
            issue = {
                "id": 90_000 + number, "number": number, "title": text, "state": "open",
                "body": f"{text}\n\nhostile mcp", "user": _user(f"mallory{k}"),
                "author_association": "NONE", "labels": [], "comments": 1,
                "html_url": f"https://github.com/{REPO}/issues/{number}",
                "created_at": when, "updated_at": when,
            }  # fmt: skip
            comment = {
                "id": 95_000 + number, "body": f"{text}\n\nhostile mcp {H.END}",
                "user": _user(f"eve{k}"), "author_association": "NONE",
                "html_url": f"https://github.com/{REPO}/issues/{number}#issuecomment-{95_000 + number}",
                "issue_url": f"https://api.github.com/repos/{REPO}/issues/{number}",
                "created_at": when, "updated_at": when,
            }  # fmt: skip
            indexed.land_raw(conn, REPO, repo_id, "issue", 90_000 + number, number, issue)
            indexed.land_raw(conn, REPO, repo_id, "issue_comment", 95_000 + number, number, comment)


def _relored(argv: list[str], env: dict) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert relored.main(argv, env=env, out=out, err=err) == 0, err.getvalue()


def _land_world(landing: worlds.Landing) -> None:
    """After the corpus's extract: hostile threads, a working clone, the rules."""
    _land_hostile(landing.url)
    origin = landing.mktemp("mcp-origin")
    (origin / "src" / "shop").mkdir(parents=True)
    (origin / "src" / "shop" / "cart.py").write_text(CART)
    (origin / "src" / "shop" / "wish.py").write_text(COPY)
    _git(origin, "init", "-q", "-b", "main")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-q", "-m", "Add the cart")
    _relored(["clone", "--repo", REPO, "--url", str(origin), "--json"], landing.env)
    rules = landing.mktemp("mcp-rules") / "rules.yaml"
    rules.write_text(RULES)
    _relored(["rules", "load", "--repo", REPO, str(rules), "--json"], landing.env)


WORLD_PART = worlds.Part(REPO, corpus=_corpus, land=_land_world)


@pytest.fixture(scope="module")
def daemon(indexed_world):
    with indexed_world.serving() as base_url:
        yield base_url


@pytest.fixture(scope="module")
def code_cache(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("mcp-code-cache"))


def _env(api: str, code_cache: str) -> dict:
    # the client's rules session tokens beside the code cache, never in ~/.local/state
    state = str(Path(code_cache) / "client-state")
    return {"RELORE_API": api, "RELORE_CODE_CACHE": code_cache, "RELORE_STATE_DIR": state}


def _session(api: str, code_cache: str, work, *, cwd: Path = TREE):
    """``work(client)`` in one MCP session: ``relore mcp`` started over stdio in ``cwd``, as a
    harness starts it."""

    async def go():
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "relore.client", "mcp"],
            env=_env(api, code_cache),
            cwd=str(cwd),
        )
        async with Client(params) as client:
            return await work(client)

    return asyncio.run(go())


def _calls(api: str, code_cache: str, *calls: tuple[str, dict]) -> list:
    """Each (tool, arguments) called in order, in one MCP session."""

    async def work(client):
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    return _session(api, code_cache, work)


def _cli(api: str, code_cache: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):  # argparse's refusals go to sys.stderr
        code = client_cli.main(list(argv), env=_env(api, code_cache), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


_RUN_FACTS = (("budget",), ("files", "parsed"), ("files", "from_cache"))
_AGE = r"\b[0-9]+(?:s|m|h|d|mo|y)\b"  # contract/stamps.age: a fresh pass ages by the second


def _untimed(value, at: tuple = ()):
    """A page without what differs from one run to the next: why's budget (how long each
    walk took), symbol's parse-or-cache counts (the first run parses, the next reads), and
    ages counted in seconds (status's marks)."""
    if isinstance(value, dict):
        return {
            k: _untimed(v, (*at, k)) for k, v in value.items() if (*at[-1:], k) not in _RUN_FACTS
        }
    if isinstance(value, list):
        return [_untimed(v, at) for v in value]
    if not isinstance(value, str):
        return value
    value = re.sub(r"[0-9]+ ms\b", "… ms", value)
    value = re.sub(rf"\({_AGE}\)|^{_AGE}$", "(age)", value)
    return re.sub(r"[0-9]+ parsed, [0-9]+ from cache", "… parsed, … from cache", value)


def _text(result) -> str:
    (block,) = result.content
    return block.text


# every tool, its arguments, and the CLI's words for the same call
def _every_tool(number: int) -> list[tuple[str, dict, list[str]]]:
    tree = str(TREE)
    return [
        ("search", {"text": "AttributeError", "repo": REPO, "limit": 3},
         ["search", "AttributeError", "--repo", REPO, "--limit", "3"]),
        ("precedent", {"q": "fix the price rounding", "repo": REPO, "limit": 2},
         ["precedent", "fix the price rounding", "--repo", REPO, "--limit", "2"]),
        ("thread", {"ref": f"{REPO}#{number}"}, ["thread", f"{REPO}#{number}"]),
        ("thread", {"ref": str(number), "repo": REPO, "outline": True},
         ["thread", str(number), "--repo", REPO, "--outline"]),
        ("inflight", {"ref": f"{REPO}#{number}"}, ["inflight", f"{REPO}#{number}"]),
        ("why", {"target": "src/shop/cart.py:3", "repo": REPO},
         ["why", "src/shop/cart.py:3", "--repo", REPO]),
        ("symbol", {"name": "Cart", "repo": REPO}, ["symbol", "Cart", "--repo", REPO]),
        ("grep", {"pattern": "price", "repo": REPO, "fixed": True},
         ["grep", "price", "--repo", REPO, "--fixed"]),
        ("copies", {"name": "src.shop.cart.Cart", "repo": REPO},
         ["copies", "src.shop.cart.Cart", "--repo", REPO]),
        ("map", {"path": tree}, ["map", tree]),
        ("defs", {"name": "helper", "path": tree}, ["defs", "helper", tree]),
        ("refs", {"name": "helper", "path": tree, "kind": "call"},
         ["refs", "helper", tree, "--kind", "call"]),
        ("status", {}, ["status"]),  # last: the search above has built the index by then
    ]  # fmt: skip


def test_every_tool_is_listed_read_only_with_its_purpose_and_schema(daemon, code_cache):
    async def work(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in _session(daemon, code_cache, work)}
    assert sorted(tools) == sorted(mcp_server.Tools({}).verbs)
    assert {"search", "precedent", "thread", "inflight", "status", "rules", "why", "symbol",
            "grep", "copies", "map", "defs", "refs"} == set(tools)  # fmt: skip
    for name, tool in tools.items():
        assert tool.description == verbs.VERBS[name].purpose
        assert tool.annotations.read_only_hint is True, name
        assert tool.annotations.destructive_hint is False, name
        assert tool.input_schema["type"] == "object" and tool.input_schema["properties"], name
        assert "json" not in tool.input_schema["properties"], name
    assert "session" not in tools["rules"].input_schema["properties"]  # the MCP session's
    assert tools["search"].input_schema["properties"]["limit"]["maximum"] == 10
    assert tools["thread"].input_schema["required"] == ["ref"]


def test_every_tool_answers_with_the_text_and_page_relore_prints(daemon, code_cache):
    number = _corpus().facts["injection_numbers"][0]
    table = _every_tool(number)
    results = _calls(daemon, code_cache, *[(name, args) for name, args, _ in table])
    for (name, _, argv), result in zip(table, results, strict=True):
        assert not result.is_error, (name, _text(result))
        code, out, err = _cli(daemon, code_cache, *argv)
        assert code == 0, (argv, err)
        assert _untimed(_text(result)) == _untimed(out.rstrip("\n")), name
        code, out, err = _cli(daemon, code_cache, *argv, "--json")
        assert _untimed(result.structured_content) == _untimed(json.loads(out)), name
    pages = {
        name: result.structured_content for (name, _, _), result in zip(table, results, strict=True)
    }
    assert pages["search"]["returned"] >= 1 and pages["search"]["total"] >= 1
    assert pages["thread"]["thread"]["number"] == number
    assert pages["symbol"]["total"] == 1 and pages["copies"]["total"] == 1
    assert "return sum(" in pages["why"]["text"] and pages["why"]["line"] == 3


def test_map_defs_refs_read_the_tree_the_server_was_started_in(daemon, code_cache):
    (result,) = _calls(daemon, code_cache, ("defs", {"name": "helper"}))
    assert not result.is_error, _text(result)
    assert "sample.py⟧:" in _text(result) and result.structured_content["total"] >= 1


NO_DAEMON = "http://127.0.0.1:9"  # map/defs/refs never ask one


def test_map_defs_refs_refuse_a_path_outside_the_servers_tree(code_cache):
    calls = [
        ("map", {"path": "/etc"}),
        ("map", {"path": "../../.."}),
        ("defs", {"name": "root", "path": "/etc"}),
        ("defs", {"name": "root", "path": "../../.."}),
        ("refs", {"name": "root", "path": "/etc/passwd"}),
    ]

    async def work(client):
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = _session(NO_DAEMON, code_cache, work, cwd=TREE)
    for (name, arguments), result in zip(calls, results, strict=True):
        assert result.is_error, (name, arguments, _text(result)[:500])
        assert result.structured_content["exit_status"] == 2, (name, arguments)
        assert "outside" in _text(result) and "root:x:0" not in _text(result), _text(result)


def test_map_defs_refs_fence_and_quote_a_hostile_trees_names_and_lines(tmp_path, code_cache):
    tree = tmp_path / "tree"
    written = H.write_source_tree(tree)
    calls = [
        ("map", {}),
        ("map", {"focus": ["evil"]}),
        ("defs", {"name": "needle_hostile"}),
        ("refs", {"name": "needle_hostile"}),
        ("refs", {"name": "needle_hostile", "path": "evil"}),
    ]

    async def work(client):
        return [await client.call_tool(name, arguments) for name, arguments in calls]

    results = _session(NO_DAEMON, code_cache, work, cwd=tree)
    for (name, arguments), result in zip(calls, results, strict=True):
        assert not result.is_error, (name, arguments, _text(result)[:500])
        H.check_text(_text(result))
        H.check_json(result.structured_content)
    assert results[2].structured_content["total"] == len(written)


def test_hostile_titles_and_comments_stay_quoted_or_fenced_in_tool_text(daemon, code_cache):
    calls = [("search", {"text": "hostile mcp", "repo": REPO})]
    for k in range(len(HOSTILE)):
        ref = f"{REPO}#{HOSTILE_FIRST + k}"
        calls += [("thread", {"ref": ref}), ("thread", {"ref": ref, "outline": True})]
    results = _calls(daemon, code_cache, *calls)
    for (name, args), result in zip(calls, results, strict=True):
        assert not result.is_error, (name, args, _text(result))
        H.check_text(_text(result))
        H.check_json(result.structured_content)
    assert results[0].structured_content["total"] >= len(HOSTILE)
    seen = "".join(_text(r) for r in results)
    assert all(canary in seen for canary in H.CANARIES[: len(HOSTILE)])


def test_the_demo_corpus_prompt_injections_reach_the_agent_only_quoted(daemon, code_cache):
    injections = _corpus().facts["injections"]
    calls = [
        (
            "thread",
            {"ref": f"{REPO}#{i['number']}", "comment": str(i["comment_id"])}
            if i["comment_id"]
            else {"ref": f"{REPO}#{i['number']}", "full": True},  # planted in the opening post
        )
        for i in injections
    ]
    results = _calls(daemon, code_cache, *calls)
    for injection, result in zip(injections, results, strict=True):
        assert not result.is_error, _text(result)
        text = _text(result)
        lead = injection["text"].removeprefix("<!-- ")[:40]
        hits = [line for line in text.split("\n") if lead in line]
        # an HTML comment is markup: the text a thread page serves has none of it
        assert hits or injection["text"].startswith("<!--"), (injection["number"], text)
        assert all(line.lstrip().startswith(">") for line in hits), hits


@contextmanager
def _other_version():
    """A daemon of another version: relore's header, a version this client refuses."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"{}"
            self.send_response(200)
            self.send_header(wire.VERSION_HEADER, "999.0.0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _same_failure(api: str, code_cache: str, result, argv: list[str], status: int) -> None:
    """A tool error carrying the line and exit status ``relore`` gives for ``argv``."""
    assert result.is_error, _text(result)
    code, out, err = _cli(api, code_cache, *argv)
    assert code == status and out == "", (argv, code, err)
    line = err.strip().split("\n")[-1]  # argparse prints its usage first
    page = result.structured_content
    assert page["exit_status"] == status and page["error"] == line, (page, line)
    assert _text(result).startswith(line)


def test_a_daemon_that_is_down_is_a_tool_error_never_an_empty_page(code_cache):
    down = "http://127.0.0.1:9"
    calls = [("search", {"text": "anything", "repo": REPO}), ("status", {})]
    for (_, _), result, argv in zip(
        calls,
        _calls(down, code_cache, *calls),
        (["search", "anything", "--repo", REPO], ["status"]),
        strict=True,
    ):
        _same_failure(down, code_cache, result, argv, client_cli.ExitStatus.DAEMON_DOWN)
        assert "no relore daemon at" in _text(result)


def test_another_daemon_version_is_the_version_mismatch_tool_error(code_cache):
    with _other_version() as api:
        (result,) = _calls(api, code_cache, ("status", {}))
        _same_failure(api, code_cache, result, ["status"], client_cli.ExitStatus.VERSION_MISMATCH)


def test_not_indexed_and_bad_input_are_tool_errors_with_the_clis_words(daemon, code_cache):
    calls = [
        ("thread", {"ref": "acme/never-indexed#1"}),
        ("search", {"text": "x", "repo": REPO, "limit": 99}),
        ("thread", {"ref": f"{REPO}#1", "outline": True, "full": True}),
        ("search", {"text": "x\x00y", "repo": REPO}),
    ]
    argvs = [
        (["thread", "acme/never-indexed#1"], client_cli.ExitStatus.NOT_INDEXED),
        (["search", "x", "--repo", REPO, "--limit", "99"], client_cli.ExitStatus.USAGE),
        (["thread", f"{REPO}#1", "--outline", "--full"], client_cli.ExitStatus.USAGE),
        (["search", "x\x00y", "--repo", REPO], client_cli.ExitStatus.USAGE),
    ]
    results = _calls(daemon, code_cache, *calls)
    for result, (argv, status) in zip(results, argvs, strict=True):
        _same_failure(daemon, code_cache, result, argv, status)


def test_a_tool_refuses_arguments_it_does_not_take_or_of_the_wrong_type(daemon, code_cache):
    results = _calls(
        daemon,
        code_cache,
        ("search", {"text": "x", "bogus": 1}),
        ("search", {"text": "x", "limit": "three"}),
        ("rules", {"files": ["a.py"], "repo": REPO, "session": "mine"}),
        ("nosuchtool", {}),
    )
    for result in results:
        assert result.is_error, _text(result)
        assert result.structured_content["exit_status"] == client_cli.ExitStatus.USAGE
    assert "no argument bogus" in _text(results[0])
    assert "limit must be an integer" in _text(results[1])
    assert "no argument session" in _text(results[2])


def test_rules_are_never_repeated_within_an_mcp_session_and_sent_again_in_a_new_one(
    daemon, code_cache
):
    call = ("rules", {"files": ["src/shop/cart.py"], "repo": REPO, "task": "price rounding"})
    first, again = _calls(daemon, code_cache, call, call)
    sent = "Amounts are decimal.Decimal"
    assert not first.is_error, _text(first)
    assert sent in _text(first)
    H.check_text(_text(first))
    assert sent not in _text(again)  # this MCP session was sent it
    (other,) = _calls(daemon, code_cache, call)  # a new MCP session
    assert sent in _text(other)
    assert first.structured_content["session"] != other.structured_content["session"]
    (refreshed,) = _calls(daemon, code_cache, call, (call[0], {**call[1], "refresh": True}))[1:]
    assert sent in _text(refreshed)
