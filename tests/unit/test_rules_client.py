"""`relore rules`: argument checks before any request, the session default, the renderer."""

from __future__ import annotations

import io

import pytest

from relore.client import cli, render
from relore.client import rules as rules_mod
from relore.contract.rules.choose import Rule, choose, present


def _run(*argv, env=None):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        list(argv), env=env or {"RELORE_API": "http://127.0.0.1:9"}, stdout=out, stderr=err
    )
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        ["rules", "a.py", "--repo", "o/n", "--task", "x" * 501],
        ["rules", "a.py", "--repo", "o/n", "--max-tokens", "99"],
        ["rules", "a.py", "--repo", "o/n", "--session", "has space"],
        ["rules", "a.py"],  # --repo is required
        ["rules", "--repo", "o/n"],  # a file is required
    ],
)
def test_bad_arguments_are_refused_before_any_request(argv):
    code, out, _ = _run(*argv)
    assert code == cli.ExitStatus.USAGE  # not DAEMON_DOWN: nothing was sent
    assert out == ""


def test_the_session_comes_from_the_environment_else_the_terminal():
    assert rules_mod.default_session({"RELORE_SESSION": "agent-7"}) == "agent-7"
    first = rules_mod.default_session({})
    assert first == rules_mod.default_session({})  # stable within a terminal
    assert first.startswith("term-") and rules_mod.valid_session(first)


def test_the_page_quotes_rule_text_and_lists_other_titles():
    rules = [
        Rule("r1", "Outbound timeouts", "Set a timeout.\nAlways.", ("global",), always=True),
        *[Rule(f"f{i}", f"Filler {i}", "Widgets.", ("src/",)) for i in range(12)],
    ]
    reply, _ = choose(rules, ["src/a.py"], "add a timeout")
    page = present({"repo": "o/n", "session": "s", **reply})
    text = render.rules_page(page)
    lines = text.splitlines()
    assert lines[0] == "Rules for o/n (follow before writing code; sections: src)"
    assert "- [global] r1 ⟦Outbound timeouts⟧ (always)" in lines
    assert "  > Set a timeout." in lines and "  > Always." in lines
    assert "- f0 ⟦Filler 0⟧" in lines
    assert any(line.startswith("held back: ") for line in lines)
    # every line of retrieved rule text is marked
    assert "Set a timeout." not in [line.strip() for line in lines]
