"""``why``'s walks through the clone's history: blame, the revision chain (``git log -L``),
the origin chain (``git log -S`` on the line's most distinctive word that reaches further
back than the revision chain), and the first-parent merge that carried a commit.

Every walk runs through :class:`~relore.serve.clone.git.Git` under the request's budget: at
most ``MAX_PICKAXE_WALKS`` full-history pickaxe walks, one deadline.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from relore.contract import stamps
from relore.contract.envelope import one_line
from relore.serve.clone.git import Budget, BudgetSpent, Git, GitFailed, GitTimeout
from relore.serve.clone.why.lines import DECLINED, candidates, decline_reason

REVISIONS_CAP = 20
ORIGIN_CAP = 10
MAX_PICKAXE_WALKS = 3

_FORMAT = "--format=%x01%H%x1f%aI%x1f%cI%x1f%an%x1f%s"
_SUBJECT_PR = re.compile(r"\(#([0-9]{1,9})\)")
_MERGE_PR = re.compile(r"^Merge pull request #([0-9]{1,9})\b")


@dataclass
class Commit:
    sha: str
    authored: str
    committed: str
    author: str
    subject: str

    def row(self) -> dict:
        return {
            "sha": self.sha,
            "short": self.sha[:12],
            "date": stamps.date(self.authored),
            "age": stamps.age(self.authored),
            "author": one_line(self.author, 80),
            "subject": one_line(self.subject),
        }


def _commits(text: str) -> list[Commit]:
    found = []
    for record in text.split("\x01")[1:]:
        fields = record.split("\n", 1)[0].split("\x1f")
        if len(fields) == 5 and re.fullmatch(r"[0-9a-f]{40}", fields[0]):
            found.append(Commit(*fields))
    return found


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def subject_number(subject: str) -> int | None:
    """The pull request a commit subject names: GitHub's merge subject, else the last
    ``(#N)`` (a squash merge appends its number last)."""
    merged = _MERGE_PR.match(subject)
    if merged:
        return int(merged.group(1))
    numbers = _SUBJECT_PR.findall(subject)
    return int(numbers[-1]) if numbers else None


def blame_row(porcelain: str) -> dict:
    head, _, rest = porcelain.partition("\n")
    sha, original_line, *_ = head.split()
    fields: dict[str, str] = {}
    boundary = False
    for row in rest.split("\n"):
        if row.startswith("\t"):
            break
        key, _, value = row.partition(" ")
        if key == "boundary":
            boundary = True
        fields.setdefault(key, value)
    offset = fields.get("author-tz", "+0000")
    sign = -1 if offset.startswith("-") else 1
    tz = timezone(sign * timedelta(hours=int(offset[1:3] or 0), minutes=int(offset[3:5] or 0)))
    authored = datetime.fromtimestamp(int(fields.get("author-time", "0")), tz=UTC).astimezone(tz)
    return {
        "sha": sha,
        "short": sha[:12],
        "author": one_line(fields.get("author", ""), 80),
        "date": stamps.date(authored),
        "age": stamps.age(authored),
        "subject": one_line(fields.get("summary", "")),
        "filename": fields.get("filename"),
        "original_line": int(original_line),
        "boundary": boundary,
    }


async def revision_chain(git: Git, path: str, line: int) -> tuple[list[Commit], dict]:
    try:
        out = await git.run(
            ["log", "-L", f"{line},{line}:{path}", "-s", f"-n{REVISIONS_CAP + 1}", _FORMAT, "HEAD"],
            what="git log -L (revision chain)",
            walk="history",
        )
    except GitTimeout:
        return [], {"timed_out": True}
    rows = _commits(out.text)
    capped = len(rows) > REVISIONS_CAP
    return rows[:REVISIONS_CAP], {"capped": capped}


PICKAXE_KEEP_BYTES = 16_000_000  # ~100,000 commits of this format: the origin is the last


async def _pickaxe(git: Git, word: str, paths: list[str]) -> tuple[list[Commit], bool]:
    """The commits that changed how often ``word`` occurs in the file (under every name it
    had), oldest first, and whether the walk's output was read whole. One name follows
    renames itself (``--follow``); ``--follow --reverse`` prints nothing, so git lists
    newest first and the order is turned here."""
    args = ["log", "-S", word, _FORMAT, "HEAD"]
    args += ["--", *paths] if len(paths) > 1 else ["--follow", "--", paths[0]]
    out = await git.run(
        args, what=f"git log -S {word}", walk="pickaxe", keep_bytes=PICKAXE_KEEP_BYTES
    )
    return list(reversed(_commits(out.text))), out.complete


def _line_words(lines: list[str], line: int, path: str) -> tuple[str | None, list]:
    """Why the line declines the pickaxe, or its candidate words."""
    reason = decline_reason(lines, line, path)
    if reason:
        return reason, []
    return None, candidates(lines[line - 1], "\n".join(lines))


async def origin_chain(
    git: Git,
    budget: Budget,
    lines: list[str],
    line: int,
    revisions: list[Commit],
    revisions_capped: bool,
    paths: list[str],
) -> dict:
    origin: dict = {"word": None, "declined": None, "returned": 0, "total": 0, "commits": []}
    # pure text over up to 5 MB: off the event loop
    reason, found = await asyncio.to_thread(_line_words, lines, line, paths[0])
    if reason:
        origin["declined"] = reason
        origin["note"] = DECLINED[reason].format(line=line)
        origin["candidates"] = []
        return origin
    origin["candidates"] = []
    if not found:
        origin["declined"] = "no word"
        origin["note"] = (
            f"line {line} has no word of three or more letters that is not a keyword: "
            "nothing distinctive to pickaxe"
        )
        return origin
    floor = revisions[-1] if revisions else None
    seen = {c.sha for c in revisions}
    accepted: tuple[str, list[Commit]] | None = None
    for word, in_file in found:
        entry: dict = {"word": word, "in_file": in_file, "walked": False}
        origin["candidates"].append(entry)
        if accepted is not None:
            continue
        if budget.pickaxe_left() <= 0:
            entry["skipped"] = "pickaxe budget spent"
            continue
        try:
            rows, whole = await _pickaxe(git, word, paths)
        except GitTimeout:
            entry["skipped"] = "timed out"
            break
        except BudgetSpent:
            entry["skipped"] = "pickaxe budget spent"
            continue
        entry["walked"] = True
        entry["commits"] = len(rows)
        if not whole:
            # the oldest rows were past what was read: the origin is not known
            entry["cut"] = True
            budget.notes.append(f"git log -S {word}: output over {PICKAXE_KEEP_BYTES:,} bytes")
            rows = []
        if rows:
            entry["oldest"] = {"sha": rows[0].sha[:12], "date": stamps.date(rows[0].authored)}
        reaches = (
            bool(rows)
            and rows[0].sha not in seen
            and (floor is None or _when(rows[0].committed) < _when(floor.committed))
        )
        entry["reaches_further"] = reaches
        if reaches:
            accepted = (word, rows)
    if accepted is None:
        walked = sum(1 for c in origin["candidates"] if c["walked"])
        unwalked = len(origin["candidates"]) - walked
        if any(c.get("skipped") == "timed out" for c in origin["candidates"]):
            note = "the pickaxe timed out before a word reached further back"
        elif any(c.get("skipped") == "pickaxe budget spent" for c in origin["candidates"]):
            note = (
                f"none of the {walked} words walked reaches further back than the revision "
                f"chain; stopped at the budget of {budget.max_pickaxe_walks} pickaxe walks "
                f"({unwalked} candidates not walked)"
            )
        else:
            note = (
                f"none of the {walked} words reaches further back than the revision chain: "
                "the revision chain is this line's history in this file"
            )
        if revisions_capped:
            note += (
                f"; the revision chain was cut at {REVISIONS_CAP}, so its older revisions "
                "were not compared"
            )
        origin["note"] = note
        return origin
    word, rows = accepted
    origin["word"] = word
    origin["order"] = "oldest first: the commit that brought the word in, then each change"
    origin["total"] = len(rows)
    origin["commits"] = rows[:ORIGIN_CAP]  # mapped to rows by the caller
    origin["returned"] = len(origin["commits"])
    return origin


async def merge_that_carried(git: Git, sha: str) -> Commit | None:
    """The first-parent commit that brought ``sha`` in: the oldest commit on HEAD's
    first-parent line that descends from it. A merge whose first parent is not ``sha``
    carried it; anything else means ``sha`` was committed on the line itself."""
    try:
        first_parent = await git.run(
            [
                "log",
                "--first-parent",
                "--format=%H%x1f%P%x1f%aI%x1f%cI%x1f%an%x1f%s",
                f"{sha}..HEAD",
            ],
            what="git log --first-parent (carrying merge)",
            keep_bytes=16_000_000,
        )
        ancestry = await git.run(
            ["rev-list", "--ancestry-path", f"{sha}..HEAD"],
            what="git rev-list --ancestry-path (carrying merge)",
            keep_bytes=16_000_000,
        )
    except (GitTimeout, GitFailed):
        return None
    if not (first_parent.complete and ancestry.complete):
        return None
    descendants = set(ancestry.text.split())
    for row in reversed(first_parent.text.splitlines()):
        fields = row.split("\x1f")
        if len(fields) != 6 or fields[0] not in descendants:
            continue
        parents = fields[1].split()
        if len(parents) > 1 and parents[0] != sha:
            return Commit(fields[0], fields[2], fields[3], fields[4], fields[5])
        return None
    return None
