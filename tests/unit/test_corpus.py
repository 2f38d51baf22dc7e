"""The generated corpus: determinism, real GitHub shapes, internal consistency, planted facts."""

from __future__ import annotations

import json
import re
import sysconfig
import time
from collections import Counter
from pathlib import Path

import pytest
from fixtures import corpus, recorded

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture(scope="module")
def small() -> corpus.Corpus:
    return corpus.generate(seed=7, threads=60)


def dump(c: corpus.Corpus) -> str:
    return json.dumps([c.repo_payload, c.issues, c.comments, c.facts], sort_keys=False)


def keys_union(items, pick=lambda x: x) -> set[str]:
    out: set[str] = set()
    for item in items:
        value = pick(item)
        if isinstance(value, dict):
            out |= set(value)
    return out


def test_same_seed_does_not_give_byte_identical_payloads():
    a, b = corpus.generate(seed=3, threads=30), corpus.generate(seed=3, threads=30)
    assert dump(a) == dump(b)
    assert dump(a) != dump(corpus.generate(seed=4, threads=30))


def test_generated_issue_lacks_a_key_that_recorded_github_issues_have(small):
    recorded_items = recorded.recorded_issue_items()
    rec_issues = [i for i in recorded_items if "pull_request" not in i]
    rec_prs = [i for i in recorded_items if "pull_request" in i]
    gen_issues = [i for i in small.issues if "pull_request" not in i]
    gen_prs = [i for i in small.issues if "pull_request" in i]
    assert gen_issues and gen_prs
    optional = {"parent_issue_url"}  # only sub-issues carry it, in the recordings too
    for gen, rec in ((gen_issues, rec_issues), (gen_prs, rec_prs)):
        wanted = keys_union(rec) - optional
        for item in gen:
            assert wanted <= set(item), wanted - set(item)
    assert keys_union(rec_issues) <= keys_union(gen_issues)
    for pick in (
        lambda i: i["user"],
        lambda i: (i["labels"] or [None])[0],
        lambda i: i.get("reactions"),
    ):
        assert keys_union(recorded_items, pick) <= keys_union(small.issues, pick)
    assert keys_union(rec_prs, lambda i: i["pull_request"]) <= set(gen_prs[0]["pull_request"])


def test_generated_comment_or_repo_lacks_a_recorded_key(small):
    rec = recorded.recorded_comment_items()
    for comment in small.comments:
        assert keys_union(rec) <= set(comment)
        assert keys_union(rec, lambda c: c["user"]) <= set(comment["user"])
    repo = recorded.load_json("github-to-sqlite", "tests", "repo.json")
    assert set(repo) <= set(small.repo_payload)
    assert set(repo["owner"]) <= set(small.repo_payload["owner"])
    assert small.repo_payload["owner"]["type"] == "Organization"
    assert small.repo_payload["full_name"] == "acme/widgets"
    assert isinstance(small.repo_payload["id"], int)


def test_issue_comment_count_disagrees_with_its_comments(small):
    per_issue = Counter(int(c["issue_url"].rsplit("/", 1)[1]) for c in small.comments)
    for issue in small.issues:
        assert issue["comments"] == per_issue.get(issue["number"], 0)
        assert len(small.comments_for(issue["number"])) == issue["comments"]
    assert max(per_issue.values()) > 12  # some threads are long


def test_timestamps_malformed_or_out_of_order(small):
    comments_by_issue: dict[str, list[dict]] = {}
    for c in small.comments:
        assert ISO.match(c["created_at"]) and ISO.match(c["updated_at"])
        assert c["updated_at"] >= c["created_at"]
        comments_by_issue.setdefault(c["issue_url"], []).append(c)
    for issue in small.issues:
        assert ISO.match(issue["created_at"]) and issue["updated_at"] >= issue["created_at"]
        assert issue["created_at"] >= "2024-01-01T00:00:00Z"
        for c in comments_by_issue.get(issue["url"], []):
            assert issue["updated_at"] >= c["updated_at"]
            assert c["created_at"] >= issue["created_at"]
        if issue["closed_at"]:
            assert issue["state"] == "closed" and issue["updated_at"] >= issue["closed_at"]


def test_ids_not_distinct_or_not_increasing(small):
    issues, comments = small.issues, small.comments
    assert [i["number"] for i in issues] == list(range(1, len(issues) + 1))
    issue_ids = [i["id"] for i in issues]
    comment_ids = [c["id"] for c in comments]
    assert issue_ids == sorted(set(issue_ids))
    assert comment_ids == sorted(set(comment_ids))
    assert not set(issue_ids) & set(comment_ids)
    created = [c["created_at"] for c in comments]
    assert created == sorted(created)  # ids grow with time, as on GitHub


def test_no_two_items_share_a_timestamp_second(small):
    issues = small.issues
    assert small.facts["same_created_at"] and small.facts["same_updated_at"]
    by_number = {i["number"]: i for i in issues}
    for group in small.facts["same_updated_at"]:
        assert len({by_number[n]["updated_at"] for n in group}) == 1
    sweep = small.facts["stale_sweep"]
    stamps = {small.comment(cid)["created_at"] for cid in sweep["comment_ids"]}
    assert stamps == {sweep["at"]} and len(sweep["comment_ids"]) >= 5


def test_mix_of_prs_bots_and_associations_missing(small):
    issues = small.issues
    prs = [i for i in issues if "pull_request" in i]
    assert 0.25 <= len(prs) / len(issues) <= 0.55
    merged = [p for p in prs if p["pull_request"]["merged_at"]]
    assert merged and {p["number"] for p in merged} == set(small.facts["merged_pr_numbers"])
    assert all(isinstance(p["draft"], bool) for p in prs)
    users = [i["user"] for i in issues] + [c["user"] for c in small.comments]
    bots = {u["login"] for u in users if u["type"] == "Bot"}
    assert bots == set(small.facts["bot_logins"]) == {"dependabot[bot]", "github-actions[bot]"}
    associations = {i["author_association"] for i in issues + small.comments}
    assert {"OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR", "NONE"} <= associations
    assert {i["state"] for i in issues} == {"open", "closed"}


def test_planted_facts_not_found_where_facts_say(small):
    facts = small.facts

    def text_of(number: int, comment_id: int | None) -> str:
        return (small.comment(comment_id) if comment_id else small.issue(number))["body"]

    everything = "\n".join(
        (i["body"] or "") for i in small.issues + small.comments if i.get("body") is not None
    )
    phrase = facts["unique_phrase"]
    assert everything.count(phrase["text"]) == 1
    assert phrase["text"] in text_of(phrase["number"], phrase["comment_id"])
    kinds = {s["kind"] for s in facts["secrets"]}
    assert kinds == {"github_token", "aws_access_key", "slack_token", "private_key", "password"}
    for s in facts["secrets"]:
        assert s["value"] in text_of(s["number"], s["comment_id"])
    patterns = [r"ghp_[A-Za-z0-9]{36}", r"AKIA[A-Z0-9]{16}", r"xoxb-\d+-\d+-\w+"]
    patterns += [r"-----BEGIN RSA PRIVATE KEY-----", r'password = "']
    for pattern in patterns:
        assert re.search(pattern, everything), pattern
    for inj in facts["injections"]:
        assert inj["text"] in text_of(inj["number"], inj["comment_id"])
    assert any("ignore previous instructions" in i["text"].lower() for i in facts["injections"])
    assert facts["fixes_links"]
    for pr, issue in facts["fixes_links"]:
        body = small.issue(pr)["body"]
        assert re.search(rf"(Fixes|Closes|Resolves) #{issue}\b", body)
        assert "pull_request" in small.issue(pr) and "pull_request" not in small.issue(issue)
    ref = facts["code_ref"]
    assert ref["symbol"] in small.comment(ref["comment_id"])["body"]


def test_traceback_frames_are_not_real_stdlib_code(small):
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    frame = re.compile(r'File "/usr/lib/python3\.\d+/([^"]+)", line (\d+), in (\w+)\n\s+(.+)')
    seen = 0
    for item in small.issues + small.comments:
        for rel, line, _func, source in frame.findall(item["body"] or ""):
            lines = (stdlib / rel).read_text(encoding="utf-8").splitlines()
            assert lines[int(line) - 1].strip() == source.strip()
            seen += 1
    assert seen > 20


def test_mutation_does_not_bump_updated_at_or_counts():
    c = corpus.generate(seed=1, threads=20)
    number = c.facts["pr_numbers"][0]
    before = c.issue(number)
    added = c.add_comment(number, "late reply", login="newcomer", at="2030-01-01T00:00:00Z")
    after = c.issue(number)
    assert after["comments"] == before["comments"] + 1
    assert after["updated_at"] == added["created_at"] == "2030-01-01T00:00:00Z"
    assert added["user"]["login"] == "newcomer" and added["author_association"] == "NONE"
    assert added["html_url"].endswith(f"/pull/{number}#issuecomment-{added['id']}")
    edited = c.edit_comment(added["id"], "edited reply")
    assert edited["body"] == "edited reply" and edited["updated_at"] > edited["created_at"]
    closed = c.edit_issue(number, state="closed", title="renamed")
    assert closed["state"] == "closed" and closed["title"] == "renamed" and closed["closed_at"]
    c.delete_comment(added["id"])
    assert c.issue(number)["comments"] == before["comments"]
    new = c.add_issue("brand new", "body text")
    assert new["number"] == 21 and new["comments"] == 0 and new["id"] > before["id"]


def test_recorded_corpus_not_verbatim():
    c = corpus.load_recorded("github-to-sqlite")
    assert c.issues == sorted(
        recorded.load_json("github-to-sqlite", "tests", "issues.json"), key=lambda i: i["number"]
    )
    assert c.comments == recorded.load_json("github-to-sqlite", "tests", "issue-comments.json")
    assert c.repo_payload["full_name"] == "dogsheep/github-to-sqlite"


def test_generation_too_slow_for_large_corpora():
    start = time.perf_counter()
    c = corpus.generate(threads=5000, comments_per_thread=20)
    assert len(c.table) > 50_000
    assert sum(1 for _ in zip(range(2000), c.iter_comments(), strict=False)) == 2000
    assert time.perf_counter() - start < 5
