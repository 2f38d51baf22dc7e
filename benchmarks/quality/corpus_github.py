"""The excerpt corpus (../shared/corpus/threads.jsonl) as the GitHub payloads relore lands.

Each thread becomes what the extractor would have landed from api.github.com: the
repository, the issue-list item (pull requests too, with ``pull_request.merged_at``), one
issue comment per ``comment`` turn, one review per ``review`` turn, and one review comment
per reply of a ``review_thread`` turn (the first anchored on the corpus' path, line and
diff hunk; the replies ``in_reply_to_id`` it). Payload shapes come from the fake GitHub's
builders (tests/fixtures/corpus_payloads.py, corpus_pull_payloads.py), which follow
recorded api.github.com responses.

What the corpus does not hold is never invented as a fact:

* ``author_association`` is ``NONE`` for everyone: the corpus names logins, not their
  relation to the repository. Every human document is therefore ``reported`` (no authority
  pass can run without GitHub); logins ending in ``[bot]`` are ``Bot`` users.
* an opening post the excerpt does not show has a null body; its author is the PR author a
  review thread marks ``(author)`` when there is one, else GitHub's ``ghost`` user.
* ids (repository, issue, comment, review, user) are stable hashes, not GitHub's.
* times: a turn's date at 12:00 UTC plus a minute per turn (order kept); a turn without a
  date takes the previous turn's time; a thread with no date at all is placed by its number
  between its repository's dated threads. ``closed_at``/``merged_at`` are the last turn's
  time.
* a review's state is ``COMMENTED`` (the corpus has its text, not its verdict); commit ids,
  a review comment's review id, diff positions and sides are null; review threads without
  text (the excerpt kept only their hunk) land nothing; labels get a neutral colour; the
  repository's description, licence and dates are null.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fixtures import corpus_payloads as P  # noqa: E402
from fixtures import corpus_pull_payloads as PP  # noqa: E402

from relore.extract.landing import RawObject, Repo  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "threads.jsonl"
ASSOCIATION = "NONE"
GHOST = ("ghost", 10137)  # GitHub's placeholder for an account it cannot name
_REPLY = re.compile(r"^\*\*([^*\n]+)\*\*( \(author\))?:[ \t]*$", re.M)
_PARENT_MISSING = "[parent comment not available]"


def load_threads(path: Path = CORPUS) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def stable_id(*parts: object) -> int:
    """A positive id below 2**47 (JSON- and bigint-safe), the same for the same parts."""
    digest = hashlib.sha1(":".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:6], "big") >> 1 or 1


def _epoch(date: str) -> int:
    return int(datetime.fromisoformat(date).replace(hour=12, tzinfo=UTC).timestamp())


def split_review_thread(body: str, anchor_author: str) -> list[tuple[str, bool, str]]:
    """A review_thread turn's text as (login, is_pr_author, body) replies, in order.

    Replies are introduced by ``**login**:`` or ``**login** (author):`` lines; text before
    the first such line belongs to the turn's own author. The ``[parent comment not
    available]`` marker is the index's, not GitHub's, and is dropped.
    """
    text = body
    if text.startswith(_PARENT_MISSING):
        text = text[len(_PARENT_MISSING) :].lstrip("\n")
    marks = list(_REPLY.finditer(text))
    out = []
    lead = text[: marks[0].start()] if marks else text
    if lead.strip():
        out.append((anchor_author, False, lead.strip("\n")))
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        reply = text[mark.end() : end].strip("\n")
        if reply.strip():
            out.append((mark.group(1).strip(), bool(mark.group(2)), reply))
    return out


def pr_author(thread: dict) -> str | None:
    """The login a review thread marks ``(author)``: the pull request's author."""
    for turn in thread["turns"]:
        if turn["role"] == "review_thread":
            for login, is_author, _ in split_review_thread(turn["body"], turn["author"]):
                if is_author:
                    return login
    return None


class _Clock:
    """Turn times: a date at noon plus a minute per turn; undated turns follow the last."""

    def __init__(self, start: int):
        self.now = start
        self.step = 0

    def at(self, date: str | None) -> int:
        self.step += 1
        if date:
            self.now = _epoch(date)
        return self.now + 60 * self.step


def _undated_starts(threads: list[dict]) -> dict[tuple[str, int], int]:
    """A start time for every thread: its first date, else interpolated by number."""
    dated: dict[str, list[tuple[int, int]]] = {}
    for t in threads:
        dates = [u["date"] for u in t["turns"] if u["date"]]
        if dates:
            dated.setdefault(t["repo"], []).append((t["number"], _epoch(min(dates))))
    starts = {}
    for t in threads:
        dates = [u["date"] for u in t["turns"] if u["date"]]
        if dates:
            starts[(t["repo"], t["number"])] = _epoch(min(dates))
            continue
        points = sorted(dated[t["repo"]])
        numbers = [n for n, _ in points]
        i = bisect.bisect_left(numbers, t["number"])
        lo = points[max(i - 1, 0)]
        hi = points[min(i, len(points) - 1)]
        if hi[0] == lo[0]:
            starts[(t["repo"], t["number"])] = lo[1]
        else:
            share = (t["number"] - lo[0]) / (hi[0] - lo[0])
            starts[(t["repo"], t["number"])] = int(lo[1] + share * (hi[1] - lo[1]))
    return starts


def _user(login: str) -> dict:
    if login == GHOST[0]:
        return P.user(*GHOST)
    kind = "Bot" if login.endswith("[bot]") else "User"
    return P.user(login, stable_id("user", login), kind)


def repository_payload(full_name: str, threads: list[dict]) -> dict:
    owner_login = full_name.split("/", 1)[0]
    owner = P.user(owner_login, stable_id("user", owner_login), "Organization")
    repo_id = stable_id("repo", full_name)
    payload = P.repository(full_name, repo_id, owner, 0, 0, 0)
    mine = [t for t in threads if t["repo"] == full_name]
    payload.update(
        {
            "description": None,
            "license": None,
            "topics": [],
            "open_issues_count": sum(1 for t in mine if t["state"] == "open"),
            "open_issues": sum(1 for t in mine if t["state"] == "open"),
            "created_at": None,
            "updated_at": None,
            "pushed_at": None,
        }
    )
    return payload


def thread_objects(thread: dict, start: int) -> Iterator[RawObject]:
    """The raw objects one corpus thread lands as: the issue item, then its conversation."""
    repo, number = thread["repo"], thread["number"]
    is_pr = thread["kind"] == "pull"
    clock = _Clock(start)
    timed = [(turn, clock.at(turn["date"])) for turn in thread["turns"]]
    opening = next((u for u, _ in timed if u["role"] == "description"), None)
    created = min([at for _, at in timed], default=start)
    last = max([at for _, at in timed], default=created)
    author = (opening or {}).get("author") or pr_author(thread) or GHOST[0]
    closed = None if thread["state"] == "open" else last
    labels = [
        P.label(repo, stable_id("label", repo, name), name, "ededed", None)
        for name in thread["labels"]
    ]
    comments = [u for u in thread["turns"] if u["role"] == "comment"]
    issue_id = stable_id("issue", repo, number)
    pull = None
    if is_pr:
        merged = closed if thread["state"] == "merged" else None
        pull = {"draft": False, "merged_at": merged, "node_id": P.node_id("PR", issue_id)}
    issue = P.issue(
        repo,
        number=number,
        issue_id=issue_id,
        title=thread["title"],
        body=opening["body"] if opening else None,
        author=_user(author),
        association=ASSOCIATION,
        labels=labels,
        state="open" if thread["state"] == "open" else "closed",
        state_reason=None,
        locked=False,
        assignees=[],
        milestone_obj=None,
        comments=len(comments),
        created=created,
        updated=last,
        closed=closed,
        closed_by=None,
        reaction_counts={},
        pull=pull,
        issue_type=None,
        sub_issues=(0, 0),
        parent=None,
    )
    yield RawObject("issue", issue_id, number, issue)
    for index, (turn, at) in enumerate(timed):
        if turn["role"] == "comment":
            comment_id = stable_id("comment", repo, number, index)
            payload = P.comment(
                repo,
                comment_id=comment_id,
                number=number,
                is_pr=is_pr,
                author=_user(turn["author"]),
                association=ASSOCIATION,
                body=turn["body"],
                created=at,
                updated=at,
                reaction_counts={},
            )
            yield RawObject("issue_comment", comment_id, number, payload)
        elif turn["role"] == "review" and is_pr:
            review_id = stable_id("review", repo, number, index)
            payload = PP.review(
                repo,
                review_id=review_id,
                number=number,
                author=_user(turn["author"]),
                association=ASSOCIATION,
                body=turn["body"],
                state="COMMENTED",
                submitted=at,
                commit_id=None,
            )
            yield RawObject("review", review_id, number, payload)
        elif turn["role"] == "review_thread" and is_pr:
            yield from _review_comments(thread, index, turn, at)


def _review_comments(thread: dict, index: int, turn: dict, at: int) -> Iterator[RawObject]:
    repo, number = thread["repo"], thread["number"]
    root = None
    for k, (login, _, body) in enumerate(split_review_thread(turn["body"], turn["author"])):
        comment_id = stable_id("review_comment", repo, number, index, k)
        payload = PP.review_comment(
            repo,
            comment_id=comment_id,
            review_id=None,
            number=number,
            diff_hunk=turn["diff_hunk"],
            path=turn["path"],
            position=None,
            original_position=None,
            commit_id=None,
            original_commit_id=None,
            author=_user(login),
            association=ASSOCIATION,
            body=body,
            created=at + k,
            updated=at + k,
            reaction_counts={},
            line=turn["line"],
            original_line=turn["line"],
            side=None,
            start_line=None,
            in_reply_to_id=root,
        )
        root = root or comment_id
        yield RawObject("review_comment", comment_id, number, payload)


def repos(threads: list[dict]) -> list[str]:
    return sorted({t["repo"] for t in threads})


def corpus_objects(threads: list[dict]) -> Iterator[tuple[Repo, list[RawObject]]]:
    """Per repository: the Repo and every raw object its threads land as."""
    starts = _undated_starts(threads)
    for full_name in repos(threads):
        payload = repository_payload(full_name, threads)
        repo = Repo(payload["id"], full_name)
        objects = [RawObject("repository", repo.repo_id, None, payload)]
        for thread in threads:
            if thread["repo"] == full_name:
                objects.extend(thread_objects(thread, starts[(full_name, thread["number"])]))
        yield repo, objects
