"""Small things a new user trips on, each said once and in plain English (#16)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from relore.contract.rules.choose import Rule, SessionView, choose
from relore.extract import rules_loader
from relore.operate import clone, doctor

ROOT = Path(__file__).resolve().parents[2]


def test_doctor_says_how_to_start_the_database_once(tmp_path):
    url = f"postgresql://relore_writer@/relore?host={tmp_path}/run"
    [check] = doctor.run_checks(url, env={})
    line = check.line()
    assert check.level == doctor.FAIL
    assert line.count("relored db start") == 1, line


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_git_progress_is_shown_on_a_terminal_only():
    assert clone._progress(_Terminal()) == ["--progress"]
    assert clone._progress(io.StringIO()) == ["--quiet"]  # captured: no carriage returns
    assert clone._progress(None) == ["--quiet"]


def test_the_rules_note_names_the_flag_an_agent_passes():
    rule = Rule(
        id="r1", title="Use decimals for money", text="Money is Decimal.", scopes=("**",),
        active=True, triggers=("money",), always=False, created="", hidden=False, tagged=True,
    )  # fmt: skip
    session = SessionView()
    _, served = choose([rule], ["src/a.py"], "money", session=session)
    session.sent.update(served.sent)
    reply, _ = choose([rule], ["src/a.py"], "money", session=session)
    note = next(n for n in reply["notes"] if "not repeated" in n)
    assert "pass --refresh" in note, note


def _doc_example() -> str:
    text = (ROOT / "docs" / "rules.md").read_text()
    return text.split("```yaml\n", 1)[1].split("```", 1)[0]


def test_the_documented_rules_example_loads_as_it_says(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(_doc_example())
    rules = rules_loader.read_rules_file(path)
    assert rules[0]["id"] == "money-decimal"
    assert [(r["always"], r["active"]) for r in rules] == [
        (False, True),
        (True, True),
        (False, False),
    ]
    assert rules[1]["scopes"] == ["src/shop/api/", "web/**/*.{ts,tsx}"]


def test_a_malformed_rules_file_names_the_rule_its_line_the_field_and_the_format(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(
        "- title: One\n  text: Fine.\n  scope: global\n\n- title: Two\n  trigger: [x]\n"
    )
    with pytest.raises(rules_loader.RulesFileError) as caught:
        rules_loader.read_rules_file(path)
    said = str(caught.value)
    assert "rule 2 (line 5): unknown keys trigger" in said, said
    assert "docs/rules.md" in said


def test_the_demo_ends_by_putting_the_clis_on_path():
    tail = (ROOT / "deploy" / "local" / "demo.sh").read_text().rsplit("cat <<EOF", 1)[1]
    assert ". $BIN/activate" in tail
    assert "\n  relore search" in tail  # the bare command, once activated


def _first_page(opening_post: str, whole: int | None) -> dict:
    thread = {
        "repo": "acme/widgets", "number": 7, "kind": "issue", "state": "open", "title": "t",
        "author": "a", "trust": "reported", "age": "1d", "date": "2026-12-03",
        "url": "https://github.com/acme/widgets/issues/7",
    }  # fmt: skip
    page = {"thread": thread, "mode": "page", "opening_post": opening_post, "returned": 0,
            "total": 0, "comments": [], "notices": []}  # fmt: skip
    if whole:
        page["opening_post_chars"] = whole
    return page


def test_a_cut_opening_post_says_how_long_it_was_not_how_much_was_cut():
    """`(cut: 1328 chars)` on a 1,337-char post read as 1,328 characters left out."""
    from relore.contract import render

    text = render.thread_page(_first_page("> the head", 12_345))
    assert "opening post (cut from 12,345 chars; whole with --full):" in text


def test_an_opening_post_without_text_says_so_instead_of_an_empty_quote():
    from relore.contract import render

    lines = render.thread_page(_first_page("", None)).split("\n")
    assert "opening post: (no text)" in lines
    assert ">" not in [line.strip() for line in lines]
