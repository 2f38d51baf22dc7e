"""The rules file: what `relored rules load` accepts, refuses, and lands."""

from __future__ import annotations

import datetime as dt

import pytest

from relore.contract.rules.choose import HIDDEN_CHARACTERS
from relore.extract.rules_loader import RulesFileError, default_id, hidden_ids, parse_rules


def test_a_minimal_rule_gets_defaults_and_a_stable_id():
    (r,) = parse_rules([{"title": "T", "text": "X", "scope": "src/api/"}])
    assert r == {
        "id": default_id(["src/api/"], "T"),
        "title": "T",
        "text": "X",
        "scopes": ["src/api/"],
        "active": True,
        "triggers": [],
        "always": False,
        "created": None,
    }
    assert len(r["id"]) == 8
    assert parse_rules([{"title": "T", "text": "Y", "scope": "src/api/"}])[0]["id"] == r["id"]


def test_a_mapping_with_rules_triggers_as_text_and_dates_are_normalised():
    (r,) = parse_rules(
        {
            "rules": [
                {
                    "id": "db-1",
                    "title": "T",
                    "text": "X",
                    "scope": ["src/db/", "global"],
                    "triggers": "sql, migration",
                    "always": True,
                    "created": dt.date(2025, 1, 31),
                }
            ]
        }
    )
    assert r["triggers"] == ["sql", "migration"]
    assert r["created"] == "2025-01-31"
    assert r["scopes"] == ["src/db/", "global"]


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ("just text", "expected a list"),
        ([{"text": "X", "scope": "global"}], "title is required"),
        ([{"title": "T", "scope": "global"}], "text is required"),
        ([{"title": "T", "text": "X"}], "scope is required"),
        ([{"title": "T", "text": "X", "scope": []}], "scope is required"),
        ([{"title": "T", "text": "X", "scope": "global", "colour": 1}], "unknown keys colour"),
        ([{"title": "T", "text": "X", "scope": "global", "always": "yes"}], "true or false"),
        ([{"id": "bad id!", "title": "T", "text": "X", "scope": "global"}], "must be 1-64"),
        (
            [
                {"id": "a", "title": "T", "text": "X", "scope": "global"},
                {"id": "A", "title": "U", "text": "Y", "scope": "global"},
            ],
            "used twice",
        ),
        ([{"title": "T", "text": "X", "scope": "global", "created": "soon"}], "created"),
    ],
)
def test_a_bad_rules_file_is_refused_with_the_reason(data, needle):
    with pytest.raises(RulesFileError, match=needle):
        parse_rules(data)


@pytest.mark.parametrize(
    "char", ["\u200b", "\u200f", "\u202a", "\u202e", "\u2066", "\u2069", "\ufeff"]
)
def test_every_hidden_character_range_is_caught_at_load(char):
    rules = parse_rules([{"id": "h", "title": "T", "text": f"a{char}b", "scope": "global"}])
    assert hidden_ids(rules) == ["h"]


@pytest.mark.parametrize("char", ["\u200a", "\u2010", "\u2065", "\u206a", "é", "—"])
def test_ordinary_characters_next_to_the_ranges_are_not_hidden(char):
    assert not HIDDEN_CHARACTERS.search(f"a{char}b")
