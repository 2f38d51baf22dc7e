"""``relore VERB …`` builds that verb's parser alone (a cached ``relore refs`` starts faster):
it must read every command line, help and refusal of that verb exactly as the whole parser
does, and a command line whose first word is no verb gets the whole parser."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from relore.client.cli import main
from relore.client.definition import build_parser, verb_of
from relore.contract.verbs import VERBS

# command lines per verb: accepted ones, refused ones (a bad type, a missing argument, an
# unknown option), and its help
LINES = {
    "search": [["search"], ["search", "a b", "--repo", "o/n", "--limit", "3", "--json"],
               ["search", "x", "--repo", "bad"], ["search", "x", "--trust", "nope"],
               ["search", "x", "--repo", "a/b", "--repo", "c/d", "--org", "acme"],
               ["search", "x", "--org", "acme/widgets"]],
    "precedent": [["precedent", "turn caching off", "--repo", "o/n", "--file", "a.py",
                   "--limit", "2", "--json"], ["precedent", "x"],
                  ["precedent", "x", "--repo", "o/n", "--limit", "6"]],
    "status": [["status"], ["status", "--repo", "o/n", "--compact"], ["status", "extra"]],
    "rules": [["rules", "a.py", "--repo", "o/n", "--task", "t", "--include", "r1"],
              ["rules", "--repo", "o/n"], ["rules", "a.py"]],
    "thread": [["thread", "o/n#3", "--outline"], ["thread", "3", "--repo", "o/n", "--after", "9"],
               ["thread", "o/n#3", "--full", "--files"], ["thread", "nope"]],
    "inflight": [["inflight", "o/n#3"], ["inflight"]],
    "why": [["why", "a.py:3", "--repo", "o/n"], ["why", "a.py", "--repo", "o/n"]],
    "symbol": [["symbol", "f", "--repo", "o/n", "--path", "src", "--limit", "2"],
               ["symbol", "f", "--repo", "o/n", "--limit", "0"]],
    "grep": [["grep", "a|b", "--repo", "o/n", "-i", "--fixed"], ["grep", "--repo", "o/n"]],
    "copies": [["copies", "m.LlamaMLP", "--repo", "o/n"], ["copies", "--repo", "o/n"]],
    "map": [["map"], ["map", "src", "--focus", "a", "--focus", "b", "--limit", "5", "--json"],
            ["map", "--offset", "-1"]],
    "defs": [["defs", "f"], ["defs", "f", "src", "--offset", "2", "--json"],
             ["defs", "f", "--path", "src"], ["defs"], ["defs", "f", "--limit", "51"]],
    "refs": [["refs", "f", ".", "--kind", "call"], ["refs", "f", "--path", "x", "--limit", "1"],
             ["refs", "f", "--kind", "nope"], ["refs", "f", "--unknown"]],
    "mcp": [["mcp"], ["mcp", "extra"]],
}  # fmt: skip


def _parsed(parser, argv: list[str]) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            namespace = vars(parser.parse_args(argv))
            code = None
        except SystemExit as exc:
            namespace, code = None, exc.code
    return namespace, code, out.getvalue(), err.getvalue()


def test_every_verb_has_command_lines_here():
    assert set(LINES) == set(VERBS)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_verb_parsed_by_its_own_parser_alone_reads_as_by_the_whole_parser(verb):
    for argv in [*LINES[verb], [verb, "-h"]]:
        assert verb_of(argv) == verb
        alone = _parsed(build_parser(verb=verb), argv)
        whole = _parsed(build_parser(), argv)
        assert alone == whole, argv


@pytest.mark.parametrize(
    "argv", [[], ["-h"], ["--version"], ["nope"], ["--version", "refs"], ["Refs", "f"]]
)
def test_a_command_line_naming_no_verb_first_gets_the_whole_parser(argv):
    assert verb_of(argv) is None


@pytest.mark.parametrize("argv", [["-h"], ["nope"]])
def test_help_and_a_mistyped_verb_list_every_verb(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv, env={}, stdout=out, stderr=err)
    assert code == (0 if argv == ["-h"] else 2)
    assert all(verb in out.getvalue() + err.getvalue() for verb in VERBS)


@pytest.mark.parametrize("columns", [None, "40", "132", "0", "wide"])
def test_help_and_usage_errors_read_as_argparses_own_formatter_writes_them(monkeypatch, columns):
    """The parsers' formatter finds the terminal's width without shutil: at every width it
    must write what argparse's own formatters write."""
    from relore.client import definition

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    lines = [["-h"], ["nope"], *([verb, "-h"] for verb in VERBS), *([v, "--nope"] for v in VERBS)]
    ours = [_parsed(build_parser(), argv) for argv in lines]
    monkeypatch.setattr(definition, "_HelpFormatter", argparse.HelpFormatter)
    monkeypatch.setattr(
        definition, "_RawDescriptionHelpFormatter", argparse.RawDescriptionHelpFormatter
    )
    assert ours == [_parsed(build_parser(), argv) for argv in lines]


def test_several_repositories_are_sent_as_one_repeated_parameter_and_past_the_cap_refused():
    from relore.client import cli
    from relore.contract import limits

    parser = build_parser(verb="search")
    args = parser.parse_args(["search", "x", "--repo", "a/b", "--repo", "c/d", "--org", "acme"])
    route, params = cli.request(args, {})
    assert (route, params["repo"], params["org"]) == ("search", ["a/b", "c/d"], "acme")
    many = [w for i in range(limits.MAX_SEARCH_REPOS + 1) for w in ("--repo", f"o/r{i}")]
    with pytest.raises(cli.Refused) as refused:
        cli.request(parser.parse_args(["search", "x", *many]), {})
    assert f"at most {limits.MAX_SEARCH_REPOS} --repo values" in str(refused.value)
