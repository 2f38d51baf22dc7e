"""``relore mcp``'s tools, made from the verbs' declarations: without the SDK or a daemon.

The stdio server itself, against a running daemon, is ``tests/integration/test_mcp_server.py``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from relore.client import mcp_server
from relore.client.exits import ExitStatus, Refused
from relore.contract import limits, verbs


@pytest.fixture(scope="module")
def tools():
    return mcp_server.Tools({"RELORE_API": "http://127.0.0.1:9"})


def test_a_new_verb_without_a_tool_purpose_is_caught(tools):
    assert tools.verbs == [v for v in verbs.VERBS if v != "mcp"]


def test_a_value_starting_with_a_dash_stays_a_value(tools):
    words = mcp_server.argv("grep", {"pattern": "-e", "repo": "a/b", "path": "--x"})
    args = tools.parser.parse_args(words)
    assert (args.pattern, args.path, args.repo) == ("-e", "--x", "a/b")
    arguments = {"files": ["-a.py", "b.py"], "repo": "a/b"}
    words = mcp_server.argv("rules", arguments)
    assert tools.parser.parse_args(words).files == ["-a.py", "b.py"]


def test_tool_schemas_state_the_clis_own_limits(tools):
    schemas = {d["name"]: d["input_schema"] for d in tools.definitions()}
    search = schemas["search"]["properties"]
    assert search["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": limits.MAX_HITS,
        "description": f"hits, 1-{limits.MAX_HITS} (default {limits.MAX_HITS})",
        "default": limits.MAX_HITS,
    }
    assert search["text"]["maxLength"] == limits.MAX_PASTE_CHARS  # a pasted traceback's
    assert search["trust"]["enum"] == list(limits.TRUST_TIERS)
    assert schemas["rules"]["required"] == ["files", "repo"]
    assert "--" not in str(schemas)  # the CLI's flags are said as the tool's argument names


def test_a_refused_argument_is_the_clis_usage_line(tools):
    with pytest.raises(Refused) as caught:
        tools.call("thread", {"ref": "not a ref"}, "mcp-test")
    assert caught.value.status == ExitStatus.USAGE
    assert caught.value.line.startswith("relore thread: error: argument ref:")


def test_relore_mcp_without_the_sdk_says_which_extra_to_install():
    script = textwrap.dedent(
        """
        import io, sys

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("mcp", "mcp_types"):
                    raise ImportError("blocked: " + name, name=name)
                return None

        sys.meta_path.insert(0, Block())
        from relore.client.cli import main
        err = io.StringIO()
        print(main(["mcp"], env={}, stdout=io.StringIO(), stderr=err), err.getvalue())
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{int(ExitStatus.ERROR)} relore mcp: needs the MCP SDK")
    assert "pip install 'relore[mcp]'" in result.stdout


def test_the_search_query_is_q_as_over_http_and_text_is_still_taken(tools):
    """The query was ``q`` over HTTP and ``text`` over MCP: one name, ``q`` (the HTTP API's,
    the older public one); ``text``, MCP's old spelling, is still accepted."""
    schema = mcp_server.input_schema(verbs.VERBS["search"])["properties"]
    assert "q" in schema and "the same as q" in schema["text"]["description"]
    for arguments in ({"q": "-KeyError x", "repo": "a/b"}, {"text": "-KeyError x", "repo": "a/b"}):
        args = tools.parser.parse_args(mcp_server.argv("search", arguments))
        assert (args.q, args.repo) == ("-KeyError x", ["a/b"])  # one repo, or several
    with pytest.raises(Refused) as refused:
        mcp_server.argv("search", {"q": "a", "text": "b"})
    assert refused.value.status == ExitStatus.USAGE and "q" in refused.value.line
