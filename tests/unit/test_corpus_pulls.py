"""The generated pull-request side: determinism, consistency with issues, real diffs, facts."""

from __future__ import annotations

import json
import re

import pytest
from fixtures import corpus
from fixtures.stdlib_code import file_lines, stdlib_paths

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@pytest.fixture(scope="module")
def prs() -> corpus.Corpus:
    return corpus.generate(seed=11, threads=200)


def dump(c: corpus.Corpus) -> str:
    numbers = c.pull_numbers()
    return json.dumps(
        [
            [c.pull(n) for n in numbers],
            [c.pull_files(n) for n in numbers],
            [c.reviews_for(n) for n in numbers],
            c.review_comments,
            c.issues,
        ]
    )


def test_same_seed_does_not_give_identical_pull_payloads():
    a, b = corpus.generate(seed=5, threads=40), corpus.generate(seed=5, threads=40)
    assert dump(a) == dump(b)
    assert dump(a) != dump(corpus.generate(seed=6, threads=40))


def test_issue_pull_request_key_disagrees_with_pull_objects(prs):
    for issue in prs.issues:
        number = issue["number"]
        assert ("pull_request" in issue) == (number in prs.pulls), number
        if number not in prs.pulls:
            continue
        pull = prs.pull(number)
        assert pull["id"] != issue["id"] and pull["node_id"] == issue["node_id"]
        assert pull["merged_at"] == issue["pull_request"]["merged_at"]
        assert pull["updated_at"] == issue["updated_at"] and pull["state"] == issue["state"]
        assert pull["review_comments"] == len(prs.review_comments_for(number))
    ids = [prs.pull(n)["id"] for n in prs.pull_numbers()]
    assert len(set(ids)) == len(ids)
    assert set(ids).isdisjoint(i["id"] for i in prs.issues)


def test_review_activity_not_reflected_in_thread_updated_at(prs):
    for number in prs.pull_numbers():
        updated = prs.issue(number)["updated_at"]
        for review in prs.reviews_for(number):
            assert review["submitted_at"] <= updated
        for comment in prs.review_comments_for(number):
            assert prs.issue(number)["created_at"] < comment["created_at"] <= updated


def test_diff_lines_are_not_the_real_stdlib_lines(prs):
    checked = 0
    for number in prs.pull_numbers()[:60]:
        for f in prs.pull_files(number):
            name = f.get("previous_filename") or f["filename"]
            name = name.split("/Lib/", 1)[-1]
            if f.get("patch") is None or name not in stdlib_paths():
                continue
            lines = f["patch"].split("\n")
            old = int(HUNK.match(lines[0]).group(1))
            for line in lines[1:]:
                if line[:1] in (" ", "-"):
                    assert file_lines(name)[old - 1] == line[1:], (name, old)
                    old += 1
                    checked += 1
    assert checked > 200


def test_review_comment_hunk_does_not_end_at_its_line(prs):
    for item in prs.review_comments:
        last = item["diff_hunk"].split("\n")[-1]
        number = int(item["pull_request_url"].rsplit("/", 1)[1])
        files = {f["filename"]: f for f in prs.pull_files(number)}
        patch = files[item["path"]]["patch"].split("\n")
        assert patch[item["original_position"]] == last
        assert item["diff_hunk"] == "\n".join(patch[: item["original_position"] + 1])


def test_planted_pull_facts_not_where_facts_say(prs):
    facts = prs.facts
    secrets = {s["kind"]: s for s in facts["review_secrets"]}
    aws = secrets["aws_access_key"]
    hunk = prs.review_comment(aws["review_comment_id"])["diff_hunk"]
    assert hunk.rstrip().endswith(f'AWS_ACCESS_KEY_ID = "{aws["value"]}"')
    assert any(aws["value"] in (f.get("patch") or "") for f in prs.pull_files(aws["number"]))
    token = secrets["github_token"]
    assert token["value"] in prs.review_comment(token["review_comment_id"])["body"]
    phrase = facts["review_phrase"]
    bodies = "\n".join(c["body"] for c in prs.review_comments)
    assert bodies.count(phrase["text"]) == 1
    assert phrase["text"] in prs.review_comment(phrase["review_comment_id"])["body"]
    summary = facts["review_summary_phrase"]
    review = next(r for r in prs.reviews_for(summary["number"]) if r["id"] == summary["review_id"])
    assert summary["text"] in review["body"] and review["state"] == "CHANGES_REQUESTED"
    ghost = facts["ghost_review"]
    review = next(r for r in prs.reviews_for(ghost["number"]) if r["id"] == ghost["review_id"])
    assert review["user"] is None
    renamed = facts["renamed_file"]
    files = {f["filename"]: f for f in prs.pull_files(renamed["number"])}
    entry = files[renamed["filename"]]
    assert entry["status"] == "renamed"
    assert entry["previous_filename"] == renamed["previous_filename"]
    for cid in facts["bot_review_comment_ids"]:
        assert prs.review_comment(cid)["user"]["type"] == "Bot"
    assert facts["bot_review_comment_ids"] and facts["review_reply_ids"]
    for cid in facts["review_reply_ids"]:
        root = prs.review_comment(cid)["in_reply_to_id"]
        assert "in_reply_to_id" not in prs.review_comment(root)
    states = {r["state"] for n in prs.pull_numbers() for r in prs.reviews_for(n)}
    assert states == {"APPROVED", "CHANGES_REQUESTED", "COMMENTED"}
    assert facts["many_files_prs"]
    for number in facts["many_files_prs"]:
        assert prs.pull(number)["changed_files"] >= 100


def test_bump_pr_files_disagree_with_its_title(prs):
    for number in prs.facts["bot_pr_numbers"]:
        title = prs.issue(number)["title"]
        package, old, new = re.match(r"Bump (\S+) from (\S+) to (\S+)", title).groups()
        (entry,) = prs.pull_files(number)
        assert entry["filename"] == "requirements.txt"
        assert f"-{package}=={old}\n+{package}=={new}" in entry["patch"]
        assert prs.pull(number)["head"]["ref"] == f"dependabot/pip/{package}-{new}"


def test_mutations_do_not_touch_pulls_or_permissions():
    c = corpus.generate(seed=12, threads=30)
    number = c.facts["pr_numbers"][0]
    merged = c.edit_issue(number, merged=True, at="2031-01-01T00:00:00Z")
    assert merged["state"] == "closed" and merged["pull_request"]["merged_at"]
    assert c.pull(number)["merged"] is True
    new = c.add_issue("a new PR", "body", pull_request=True)
    assert c.pull(new["number"])["number"] == new["number"]
    assert c.pull_files(new["number"]) and c.reviews_for(new["number"]) == []
    comment = c.add_review_comment(new["number"], "first look")
    assert c.pull(new["number"])["review_comments"] == 1
    assert comment["pull_request_review_id"] == c.reviews_for(new["number"])[0]["id"]
    c.set_permission("outsider", "none")
    assert c.permission("outsider")["permission"] == "none"
    with pytest.raises(ValueError):
        c.set_permission("outsider", "superuser")
    with pytest.raises(KeyError):
        c.permission("nobody-at-all")
