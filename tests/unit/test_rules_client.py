"""`relore rules`: argument checks before any request, the session default, the renderer."""

from __future__ import annotations

import io

import pytest

from relore.client import cli
from relore.client import rules as rules_mod
from relore.contract import render
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


def test_the_token_a_reply_carried_is_kept_per_session_and_repository_and_sent_back(tmp_path):
    env = {"RELORE_STATE_DIR": str(tmp_path / "state")}
    sent = {"session": "s1", "repo": "O/N"}
    page = {"session_token": "abc_-1", "rules": []}
    assert rules_mod.remember(env, sent, page) is None
    assert "session_token" not in page  # the client holds it; the page's reader has no use
    assert rules_mod.stored_token(env, "s1", "o/n") == "abc_-1"
    assert rules_mod.stored_token(env, "s2", "o/n") is None
    assert rules_mod.stored_token(env, "s1", "o/other") is None
    (file,) = (tmp_path / "state").iterdir()
    assert file.stat().st_mode & 0o777 == 0o600 and "s1" not in file.name


def test_a_stored_token_a_daemon_could_not_have_sent_is_not_sent(tmp_path):
    env = {"RELORE_STATE_DIR": str(tmp_path)}
    rules_mod.keep_token(env, "s1", "o/n", "x" * 5000)
    assert rules_mod.stored_token(env, "s1", "o/n") is None
    rules_mod.keep_token(env, "s1", "o/n", "has space")
    assert rules_mod.stored_token(env, "s1", "o/n") is None


def test_a_session_state_that_cannot_be_written_is_a_warning_not_a_failure(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    env = {"RELORE_STATE_DIR": str(blocked / "sub")}
    warning = rules_mod.remember(env, {"session": "s", "repo": "o/n"}, {"session_token": "t"})
    assert warning and "may be sent again" in warning


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
