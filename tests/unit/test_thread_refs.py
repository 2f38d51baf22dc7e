"""What an agent pastes as a thread ref (#37 item 9): `o/n#N`, or the GitHub URL it has.

One parser (``contract.patterns.parse_thread_ref``) behind every verb taking a ref
(``thread``, ``inflight``), the CLI and ``relore mcp`` alike (its tools parse their arguments
as the command line). A URL is parsed, never fetched; a hostile one gets one line that names
what was refused and never echoes a password.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from relore.client import cli, mcp_server
from relore.client.definition import build_parser
from relore.client.exits import ExitStatus, Refused
from relore.contract import patterns

REF = ("acme/widgets", 4)


@pytest.mark.parametrize(
    ("pasted", "comment"),
    [
        ("https://github.com/acme/widgets/issues/4", None),
        ("https://github.com/acme/widgets/pull/4", None),
        ("https://github.com/acme/widgets/pull/4/files", None),
        ("https://github.com/acme/widgets/pull/4/commits/", None),
        ("  https://github.com/acme/widgets/issues/4/  ", None),
        ("HTTPS://GitHub.com/acme/widgets/issues/4", None),
        ("https://www.github.com/acme/widgets/issues/4#issue-1717", None),
        ("https://github.com/acme/widgets/pull/4/files?diff=split#diff-0a1b2c", None),
        ("https://github.com/acme/widgets/issues/4#issuecomment-1234", "issue_comment:1234"),
        ("https://github.com/acme/widgets/pull/4#discussion_r987", "review_comment:987"),
        ("https://github.com/acme/widgets/pull/4/files#discussion_r987", "review_comment:987"),
        ("https://github.com/acme/widgets/pull/4#pullrequestreview-55", "review:55"),
        ("https://ghe.example.com/acme/widgets/issues/4", None),
        ("http://ghe.internal:8080/acme/widgets/pull/4", None),
        ("https://api.github.com/repos/acme/widgets/issues/4", None),
        ("https://ghe.example.com/api/v3/repos/acme/widgets/pulls/4", None),
    ],
)
def test_a_pasted_github_url_names_its_thread_and_comment(pasted, comment):
    for verb in ("thread", "inflight"):
        args = build_parser(verb=verb).parse_args([verb, pasted])
        assert tuple(args.ref) == (*REF, comment)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("acme/widgets#4", ("acme/widgets", 4, None)),
        ("#4", (None, 4, None)),
        ("4", (None, 4, None)),
    ],
)
def test_the_short_forms_still_read_as_before(ref, expected):
    assert tuple(build_parser(verb="thread").parse_args(["thread", ref]).ref) == expected


def _params(*argv: str) -> dict:
    return cli.request(build_parser(verb=argv[0]).parse_args(list(argv)), {})[1]


def test_a_comment_anchor_opens_that_comment_like_comment_does():
    url = "https://github.com/acme/widgets/issues/4#issuecomment-1234"
    params = _params("thread", url)
    assert params["mode"] == "comment" and params["comment"] == "issue_comment:1234"
    assert (params["repo"], params["number"]) == REF
    # the same id given twice is one ask; two different ones are refused, never one chosen
    assert _params("thread", url, "--comment", "issue_comment:1234")["comment"] == (
        "issue_comment:1234"
    )
    with pytest.raises(Refused) as refused:
        _params("thread", url, "--comment", "77")
    assert refused.value.status == ExitStatus.USAGE
    # a view asked for by flag keeps its own ask; the URL still names the thread
    assert _params("thread", url, "--outline")["mode"] == "outline"
    assert _params("thread", url, "--after", "issue_comment:9")["mode"] == "page"
    assert "comment" not in _params("inflight", url)


HOSTILE = [
    ("javascript:alert(1)//github.com/acme/widgets/issues/4", "javascript: URL"),
    ("file:///etc/passwd", "file: URL"),
    ("https://octo:s3cretpass@github.com/acme/widgets/issues/4", "credentials"),
    ("https://github.com/acme/widgets/issues/../../evil/x/issues/4", "`..`"),
    ("https://github.com/%2e%2e/widgets/issues/4", "`%`"),
    ("https://github.com/acme/widgets/issues/4\n#issuecomment-1", "control character"),
    ("https://github.com/acme/widgets/blob/main/app.py", "not an issue or pull request path"),
    ("https://github.com/acme/widgets/issues/0", "no thread is numbered 0"),
    ("https://github.com/acme/widgets/issues/4#<script>", "unexpected query or fragment"),
    ("https://github.com/" + "a" * 600 + "/b/issues/4", "at most 500"),
    ("https://" + "a." * 200 + "!/acme/widgets/issues/4", "not a host name"),
]


@pytest.mark.parametrize(("pasted", "said"), HOSTILE)
def test_a_hostile_url_gets_one_line_naming_what_was_refused(pasted, said):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = cli.main(["thread", pasted], env={"RELORE_API": "http://127.0.0.1:9"}, stdout=out)
    assert code == ExitStatus.USAGE and out.getvalue() == ""
    line = err.getvalue().strip().splitlines()[-1]
    assert line.startswith("relore thread: error: argument ref:") and said in line, line
    assert "s3cretpass" not in err.getvalue()
    assert len(line) < 600


def test_relore_mcp_takes_the_same_urls_and_refuses_the_same_ones():
    tools = mcp_server.Tools({"RELORE_API": "http://127.0.0.1:9"})
    # parsed: the call goes on to the daemon, which is not there (exit 3, not a usage error)
    with pytest.raises(Refused) as down:
        tools.call("thread", {"ref": "https://github.com/acme/widgets/pull/4/files"}, "s")
    assert down.value.status == ExitStatus.DAEMON_DOWN
    with pytest.raises(Refused) as refused:
        tools.call("inflight", {"ref": HOSTILE[2][0]}, "s")
    assert refused.value.status == ExitStatus.USAGE and "credentials" in refused.value.line
    assert "s3cretpass" not in refused.value.line
    schemas = {d["name"]: d["input_schema"] for d in tools.definitions()}
    assert "URL" in schemas["thread"]["properties"]["ref"]["description"]


def test_help_says_which_urls_are_accepted():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["thread", "--help"], env={}, stdout=out) == ExitStatus.OK
    help_text = out.getvalue()
    for form in ("/issues/N", "/pull/N", "#issuecomment-N", "Enterprise"):
        assert form in " ".join(help_text.split()), form


def test_the_parser_refuses_anything_but_text():
    with pytest.raises(ValueError):
        patterns.parse_thread_ref(None)  # type: ignore[arg-type]
