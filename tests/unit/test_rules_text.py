"""The one text pipeline for rules, table-driven: what a task or a rule is reduced to."""

from __future__ import annotations

import json

import pytest

from relore.contract.rules import bm25, text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        # identifiers split three ways meet in the same two terms
        ("UserRepository", ["user", "repository"]),
        ("user_repo.py", ["user", "repository"]),
        ("user-repo", ["user", "repository"]),
        ("HTTPServer", ["http", "serv"]),
        ("parseJSONBody", ["pars", "json", "body"]),
        # numbers are words too (status codes)
        ("return 409 on a conflict", ["return", "409", "conflict"]),
        # lower-casing
        ("LOGGING", ["log"]),
        # filler words dropped
        ("use the file and add a new thing", []),
        # an extension glued to a name is ignored; a bare one names the language
        ("scanner.py", ["scan"]),
        ("src/api/orders.py", ["src", "api", "order"]),
        ("every .py file", ["python"]),
        (".ts", ["typescript"]),
        ("*.go", ["go"]),
        # aliases
        ("py", ["python"]),
        ("db", ["databas"]),  # database, stemmed
        ("databases", ["databas"]),
        ("repo repos", ["repository", "repository"]),
        ("spec specs", ["test", "test"]),
        # the rough stem
        ("validate validation validating validated", ["validat"] * 4),
        ("sanitize sanitization sanitizing", ["sanitiz"] * 3),
        ("logs logging logger", ["log"] * 3),
        ("migrations migrate migrating", ["migrat"] * 3),
        ("configuration configure", ["configur"] * 2),
        ("tests testing tested", ["test"] * 3),
        ("queries query", ["query", "query"]),
        ("dependencies dependency", ["dependency", "dependency"]),
        ("timeouts timeout", ["timeout", "timeout"]),
        ("naming name names", ["nam"] * 3),
        # words the stem must not mangle
        ("user users", ["user", "user"]),
        ("string strings", ["string", "string"]),
        ("status class analysis", ["status", "class", "analysis"]),
        ("order orders", ["order", "order"]),
    ],
)
def test_terms(given, expected):
    assert text.terms(given) == expected


@pytest.mark.parametrize(
    ("word", "topic"),
    [
        ("column", "#data"),
        ("migration", "#data"),
        ("endpoint", "#http"),
        ("timeout", "#http"),
        ("pytest", "#test"),
        ("logger", "#log"),
        ("exception", "#error"),
        ("button", "#ui"),
        ("annotations", "#types"),
        ("rename", "#naming"),
        ("secret", "#security"),
        ("settings", "#config"),
        ("dependency", "#dependency"),
        ("docstring", "#docs"),
        ("validation", "#validate"),
        ("indentation", "#style"),
        ("rebase", "#git"),
    ],
)
def test_every_topic_of_the_fifteen_is_reached(word, topic):
    assert topic in text.topics(text.terms(word))


def test_there_are_exactly_the_fifteen_named_topics():
    assert set(text.TOPICS) == {
        "data",
        "http",
        "test",
        "log",
        "error",
        "ui",
        "types",
        "naming",
        "security",
        "config",
        "dependency",
        "docs",
        "validate",
        "style",
        "git",
    }


def test_a_task_about_a_column_meets_a_rule_about_migrations_through_the_data_topic():
    rule = bm25.rule_terms("Reversible migrations", "Every migration has a down step.", [])
    query = bm25.query_weights("make the email column nullable")
    index = bm25.Index({"r": rule, "other": bm25.rule_terms("Docs", "Write docstrings.", [])})
    assert index.score("r", query) > 0
    assert index.score("other", query) == 0


def test_topics_extend_from_a_file_named_by_the_environment(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps({"billing": ["invoice", "refund"], "data": ["ledger"]}))
    env = {"RELORE_RULES_TOPICS": str(path)}
    assert "#billing" in text.topics(text.terms("refunds"), env)
    assert "#data" in text.topics(text.terms("ledger"), env)
    assert "#billing" not in text.topics(text.terms("refunds"), {})


def test_topics_file_can_be_yaml(tmp_path):
    path = tmp_path / "topics.yaml"
    path.write_text("billing:\n  - invoice\n")
    assert "#billing" in text.topics(["invoic"], {"RELORE_RULES_TOPICS": str(path)})


def test_a_topics_file_of_the_wrong_shape_is_refused(tmp_path):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(["not", "a", "mapping"]))
    with pytest.raises(ValueError, match="mapping of topic name"):
        text.topics(["x"], {"RELORE_RULES_TOPICS": str(path)})


def test_triggers_count_twice():
    once = bm25.rule_terms("t", "a rule", ["cache"])
    assert once.count("cach") == 2


def test_task_terms_are_counted_once_and_topics_weigh_half():
    weights = bm25.query_weights("cache cache the column")
    assert weights["cach"] == 1.0
    assert weights["#data"] == bm25.TOPIC_WEIGHT
