"""Secrets planted where real threads carry them never reach a mart.

One corpus holds a secret in a title, a title that is an error line, an opening post, an
error line in a comment, a review comment's body and diff hunk, a changed file's name, a
branch name and a label, plus every positive example of the redaction catalog as a comment
of its own. After one `dbt build`:

- no planted secret is in any string a mart holds (text, arrays, JSON), nor a fragment of one
  among the lexemes BM25 counts (`lexeme_stats`) or the search vectors;
- detect-secrets, a scanner relore does not share a rule with, finds nothing in a dump of
  every mart string (the second, independent oracle; plugins chosen below).
"""

from __future__ import annotations

import hashlib
import json
import random
import string

import psycopg
import pytest
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.slow

REPO_ID, REPO = 424242, "acme/leaky"
_rng = random.Random(12)


def _token(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


HEX = "0123456789abcdef"
# name -> (the text planted, the part that must not survive)
HF = "hf_" + _token(34, string.ascii_letters)
PROJ = "sk-proj-" + _token(74) + "T3BlbkFJ" + _token(74)
ANT = "sk-ant-api03-" + _token(93) + "AA"
PLANTED = {
    "title hf_": (f"Login fails with {HF}", HF),
    "openai in an error-line title": (f"ValueError: invalid api key {PROJ}", PROJ),
    "several words": ('password = "correct horse battery staple"', "correct horse battery staple"),
    "postgres url": ("DATABASE_URL=postgres://app:S3cr3tPassw0rd@db:5432/app", "S3cr3tPassw0rd"),
    "mysql -p": ("mysql -uroot -pMyPa55word9 -h db", "MyPa55word9"),
    "aws secret": (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/" + _token(18),
        None,  # the needle is the value: set below
    ),
    "bearer": ("Authorization: Bearer abcDEF123ghiJKL456mnoPQR", "abcDEF123ghiJKL456mnoPQR"),
    "anthropic": (f"ANTHROPIC_API_KEY={ANT}", ANT),
    "slack webhook": (
        f"https://hooks.slack.com/services/T{_token(8)}/B{_token(10)}/{_token(24)}",
        None,
    ),
    "npm split by a tag": ("npm_<b></b>" + (npm := _token(36)), "npm_" + npm),
    "xoxb in an error line": (
        "RuntimeError: bad credentials xoxb-"
        + (xoxb := f"{_token(12, string.digits)}-{_token(13, string.digits)}-{_token(24)}"),
        "xoxb-" + xoxb,
    ),
    "glpat in a review comment": ("glpat-" + (glpat := _token(20)), "glpat-" + glpat),
    "npm in a diff hunk": ("+NPM_TOKEN=npm_" + (npm2 := _token(36)), "npm_" + npm2),
    "replicate in a diff hunk": ("+r8_" + (r8 := _token(37)), "r8_" + r8),
    "github token in a file name": ("config/ghp_" + (ghp := _token(36)) + ".txt", "ghp_" + ghp),
    "github token in a branch": ("leak/ghp_" + (ghp2 := _token(36)), "ghp_" + ghp2),
    "stripe key as a label": ("sk_live_" + (stripe := _token(24)), "sk_live_" + stripe),
    "groq in a review": ("here: gsk_" + (groq := _token(52)), "gsk_" + groq),
}
PLANTED["aws secret"] = (PLANTED["aws secret"][0], PLANTED["aws secret"][0].split(" = ")[1])
PLANTED["slack webhook"] = (PLANTED["slack webhook"][0], PLANTED["slack webhook"][0][8:])
NEEDLES = [needle for _, needle in PLANTED.values()]


def _land(conn, object_type: str, object_id: int, number: int | None, payload: dict) -> None:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    conn.execute(
        "insert into raw.github_objects (repo_id, repo, object_type, object_id, thread_number,"
        " payload, payload_hash, is_deleted, pass_name) values (%s, %s, %s, %s, %s, %s, %s,"
        " false, 'test')",
        (REPO_ID, REPO, object_type, object_id, number, Jsonb(payload), digest),
    )


def _user(login: str) -> dict:
    return {"login": login, "id": abs(hash(login)) % 10_000, "type": "User"}


def _issue(number: int, title: str, body: str, *, pr: bool = False, labels=()) -> dict:
    issue = {
        "id": 1000 + number,
        "number": number,
        "title": title,
        "state": "open",
        "body": body,
        "user": _user("someone"),
        "author_association": "NONE",
        "labels": [{"name": name} for name in labels],
        "comments": 1,
        "html_url": f"https://github.com/{REPO}/{'pull' if pr else 'issues'}/{number}",
        "created_at": "2024-03-01T00:00:00Z",
        "updated_at": "2024-03-02T00:00:00Z",
    }
    if pr:
        issue["pull_request"] = {"merged_at": None}
    return issue


def _comment(comment_id: int, number: int, body: str) -> dict:
    return {
        "id": comment_id,
        "body": body,
        "user": _user("commenter"),
        "author_association": "NONE",
        "issue_url": f"https://api.github.com/repos/{REPO}/issues/{number}",
        "html_url": f"https://github.com/{REPO}/issues/{number}#issuecomment-{comment_id}",
        "created_at": "2024-03-01T01:00:00Z",
        "updated_at": "2024-03-01T01:00:00Z",
    }


def _seed(conn, catalog: list[dict]) -> None:
    text = {name: planted for name, (planted, _) in PLANTED.items()}
    conn.execute(
        "insert into ops.repos (repo_id, full_name, owner_login, owner_type)"
        " values (%s, %s, 'acme', 'Organization')",
        (REPO_ID, REPO),
    )
    body = "\n\n".join(
        text[name]
        for name in (
            "several words",
            "postgres url",
            "mysql -p",
            "aws secret",
            "bearer",
            "anthropic",
            "slack webhook",
            "npm split by a tag",
        )
    )
    _land(conn, "issue", 1001, 1, _issue(1, text["title hf_"], "It leaks:\n\n" + body))
    _land(
        conn,
        "issue_comment",
        2001,
        1,
        _comment(2001, 1, "```\n" + text["xoxb in an error line"] + "\n```"),
    )
    pr_body = "Fix the login flow."
    _land(
        conn,
        "issue",
        1002,
        2,
        _issue(
            2,
            text["openai in an error-line title"],
            pr_body,
            pr=True,
            labels=(text["stripe key as a label"],),
        ),
    )
    _land(
        conn,
        "pull",
        5002,
        2,
        {
            "id": 5002,
            "number": 2,
            "state": "open",
            "merged": False,
            "head": {"sha": "b" * 40, "ref": text["github token in a branch"]},
            "base": {"sha": "c" * 40, "ref": "main"},
            "changed_files": 1,
            "additions": 1,
            "deletions": 0,
        },
    )
    _land(
        conn,
        "pull_file",
        1,
        2,
        {
            "filename": text["github token in a file name"],
            "status": "added",
            "additions": 1,
            "deletions": 0,
            "changes": 1,
        },
    )
    _land(
        conn,
        "review_comment",
        7001,
        2,
        {
            "id": 7001,
            "pull_request_review_id": 8001,
            "body": "please rotate " + text["glpat in a review comment"],
            "path": "setup.cfg",
            "line": 2,
            "original_line": 2,
            "side": "RIGHT",
            "commit_id": "d" * 40,
            "original_commit_id": "d" * 40,
            "diff_hunk": "@@ -1 +1,3 @@\n"
            + text["npm in a diff hunk"]
            + "\n"
            + text["replicate in a diff hunk"],
            "user": _user("reviewer"),
            "author_association": "MEMBER",
            "html_url": f"https://github.com/{REPO}/pull/2#discussion_r7001",
            "pull_request_url": f"https://api.github.com/repos/{REPO}/pulls/2",
            "created_at": "2024-03-01T02:00:00Z",
            "updated_at": "2024-03-01T02:00:00Z",
        },
    )
    _land(
        conn,
        "review",
        8001,
        2,
        {
            "id": 8001,
            "user": _user("reviewer"),
            "body": text["groq in a review"],
            "state": "COMMENTED",
            "author_association": "MEMBER",
            "html_url": f"https://github.com/{REPO}/pull/2#pullrequestreview-8001",
            "submitted_at": "2024-03-01T02:00:00Z",
            "commit_id": "d" * 40,
        },
    )
    # every positive example of the catalog, each a comment of its own on thread 3
    _land(conn, "issue", 1003, 3, _issue(3, "Every format", "One comment per format."))
    comment_id = 3000
    for entry in catalog:
        for example, _ in entry["examples"]:
            comment_id += 1
            _land(conn, "issue_comment", comment_id, 3, _comment(comment_id, 3, example))


@pytest.fixture(scope="module")
def leaky(module_db_url, tmp_path_factory, run_dbt):
    build_dir = tmp_path_factory.mktemp("dbt")
    run_dbt(module_db_url, build_dir, "run-operation", "install_relore_functions")
    with psycopg.connect(module_db_url, autocommit=True) as conn:
        catalog = conn.execute("select marts.relore_secret_catalog()").fetchone()[0]
        _seed(conn, catalog)
    run_dbt(module_db_url, build_dir, "build")
    return {"url": module_db_url, "catalog": catalog}


def _mart_strings(url: str) -> list[tuple[str, str, str]]:
    """(table, column, value) for every string any mart holds: text, arrays, JSON."""
    found = []
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            "select table_name, column_name, data_type from information_schema.columns"
            " where table_schema = 'marts'"
            " and data_type in ('text', 'character varying', 'ARRAY', 'jsonb', 'json')"
            " order by 1, 2"
        ).fetchall()
        for table, column, kind in columns:
            value = {
                "ARRAY": f"array_to_string({column}::text[], chr(10))",
                "jsonb": f"{column}::text",
                "json": f"{column}::text",
            }.get(kind, column)
            rows = conn.execute(
                f'select {value} from marts."{table}" where {column} is not null'
            ).fetchall()
            found.extend((table, column, row[0]) for row in rows)
    return found


def test_every_catalog_example_is_still_caught_between_line_breaks(leaky):
    """The secret scan redacts a row's strings joined by line breaks and reads columns one
    by one only when that changes something: a pattern that needs the start or the end of
    the whole string (or whose lookaround a line break defeats) would let a leak through."""
    examples = [example for entry in leaky["catalog"] for example, _ in entry["examples"]]
    with psycopg.connect(leaky["url"]) as conn:
        missed = [
            example
            for example in examples
            for joined in (
                f"before\n{example}\nafter",
                f"x\n{example}",
                f"{example}\nx",
            )
            if not conn.execute("select marts.relore_has_secret(%s)", (joined,)).fetchone()[0]
        ]
    assert len(examples) > 100 and missed == []


def _redact_spans(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with ``spans`` (1-based, end exclusive) merged and replaced by labels."""
    merged: list[list] = []
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1])):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    for start, end, kind in reversed(merged):
        text = text[: start - 1] + f"[REDACTED:{kind}]" + text[end - 1 :]
    return text


def test_every_entry_redacts_its_examples_the_same_through_its_spans(leaky):
    """A normal form is searched by spans (relore_pattern_spans: where each match's secret
    starts and ends, without the groups its entry keeps), not by regexp_replace: for every
    entry and example, replacing its spans gives what its own regexp_replace gives, so each
    entry's kept groups tile its match's start and end, as the spans assume."""
    differ, compared = [], 0
    with psycopg.connect(leaky["url"]) as conn:
        for entry in leaky["catalog"]:
            label = f"[REDACTED:{entry['kind']}]"
            before, after = entry["replace"].split(label)
            lead = [int(g) for g in before.split("\\")[1:]]
            trail = [int(g) for g in after.split("\\")[1:]]
            for example, _ in entry["examples"]:
                replaced = conn.execute(
                    "select regexp_replace(%s, %s, %s, %s)",
                    (example, entry["pattern"], entry["replace"], entry["flags"]),
                ).fetchone()[0]
                spans = conn.execute(
                    "select * from marts.relore_pattern_spans(%s, %s, %s, %s, %s, %s)",
                    (example, entry["pattern"], entry["flags"], lead, trail, entry["kind"]),
                ).fetchall()
                compared += bool(spans)
                if _redact_spans(example, spans) != replaced:
                    differ.append((entry["kind"], example[:60]))
    assert compared > 100 and differ == []


def test_no_planted_secret_survives_in_any_mart_string(leaky):
    strings = _mart_strings(leaky["url"])
    assert any(table == "documents" for table, _, _ in strings)
    leaks = [
        (table, column, needle[:24])
        for table, column, value in strings
        for needle in NEEDLES
        if needle in value
    ]
    assert leaks == []


def test_every_planted_place_was_derived_and_redacted(leaky):
    """The corpus reached every mart it should: the absence above is redaction, not loss."""
    with psycopg.connect(leaky["url"]) as conn:

        def one(sql: str):
            return conn.execute(sql, (REPO_ID,)).fetchall()

        titles = dict(one("select number, title from marts.threads where repo_id = %s"))
        assert titles[1] == "Login fails with [REDACTED:hf_token]"
        assert titles[2] == "ValueError: invalid api key [REDACTED:openai_api_key]"
        (refs,) = one(
            "select head_ref, labels from marts.threads where repo_id = %s and number = 2"
        )
        assert refs == ("leak/[REDACTED:github_token]", ["[REDACTED:stripe_key]"])
        hunk = one(
            "select diff_hunk from marts.documents where repo_id = %s"
            " and document_id = 'review_comment:7001'"
        )[0][0]
        assert "NPM_TOKEN=[REDACTED:npm_token]" in hunk and "[REDACTED:replicate_token]" in hunk
        body = one(
            "select body_text from marts.documents where repo_id = %s"
            " and document_id = 'opening_post:1001'"
        )[0][0]
        for marker in ("[REDACTED:secret]", "[REDACTED:url_password]", "[REDACTED:password_flag]"):
            assert marker in body
        assert "npm_[REDACTED" not in body and "[REDACTED:npm_token]" in body
        errors = {
            row[0] for row in one("select normal_form from marts.thread_errors where repo_id = %s")
        }
        assert any("REDACTED" in error and error.startswith("RuntimeError") for error in errors)
        assert any("REDACTED" in error and error.startswith("ValueError") for error in errors)
        files = {row[0] for row in one("select path from marts.thread_files where repo_id = %s")}
        assert "config/[REDACTED:github_token].txt" in files


def test_no_fragment_of_a_planted_secret_is_a_lexeme(leaky):
    with psycopg.connect(leaky["url"]) as conn:
        fragments = {
            lexeme
            for needle in NEEDLES
            for config in ("english", "simple")
            for (lexeme,) in conn.execute(
                "select unnest(tsvector_to_array(to_tsvector(%s::regconfig, %s)))",
                (config, needle),
            ).fetchall()
            if len(lexeme) >= 8 and any(c.isdigit() for c in lexeme)
        }
        assert len(fragments) > 10
        counted = {
            row[0]
            for row in conn.execute(
                "select lexeme from marts.lexeme_stats where repo_id = %s", (REPO_ID,)
            ).fetchall()
        }
        indexed = {
            row[0]
            for row in conn.execute(
                "select distinct unnest(tsvector_to_array(search_vector)) from marts.documents"
                " where repo_id = %s",
                (REPO_ID,),
            ).fetchall()
        }
    assert counted, "lexeme_stats counted nothing for the repository"
    assert fragments & counted == set()
    assert fragments & indexed == set()


# detect-secrets' plugins, minus three whose findings are not secrets in what relore stores:
# the two high-entropy plugins flag every git sha, sha256, UUID and base64 fixture (the hunks
# and commit columns are full of them), KeywordDetector flags any quoted value after a
# secret-like name, which is what a redaction leaves (`password = "[REDACTED:secret]"`),
# and IPPublicDetector flags addresses, which are not credentials.
DETECT_SECRETS_LEFT_OUT = {
    "HexHighEntropyString",
    "Base64HighEntropyString",
    "KeywordDetector",
    "IPPublicDetector",
}


def test_detect_secrets_finds_nothing_in_any_mart(leaky, tmp_path):
    from detect_secrets import SecretsCollection
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import transient_settings

    plugins = sorted(
        cls.__name__
        for cls in get_mapping_from_secret_type_to_class().values()
        if cls.__name__ not in DETECT_SECRETS_LEFT_OUT
    )
    assert len(plugins) >= 20
    dump = tmp_path / "marts.txt"
    dump.write_text(
        "\n".join(
            f"{table}.{column}: {value}" for table, column, value in _mart_strings(leaky["url"])
        )
    )
    # the oracle works: the raw corpus, dumped the same way, is full of findings
    raw = tmp_path / "raw.txt"
    raw.write_text("\n".join(planted for planted, _ in PLANTED.values()))
    with transient_settings({"plugins_used": [{"name": name} for name in plugins]}):
        before = SecretsCollection()
        before.scan_file(str(raw))
        after = SecretsCollection()
        after.scan_file(str(dump))
    assert len(list(before)) >= 5
    found = [(secret.type, secret.line_number) for _, secret in after]
    lines = dump.read_text().splitlines()
    assert found == [], [lines[n - 1][:160] for _, n in found]
