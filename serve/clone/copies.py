"""``copies``: the ``# Copied from X`` markers in the working clone (HuggingFace's convention,
checked by their ``make fix-copies``) whose target is the name, each with the definition
under it. Marker lines are split as git streams them (``grep_records``) and parsed with no
regex that can backtrack."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from relore.contract.envelope import one_line
from relore.serve import inputs
from relore.serve.clone import grep_records, redaction
from relore.serve.clone.git import Budget, Git
from relore.serve.clone.reading import GREP, clone_text, head_of

# copies reads this much marker output; past it the total is a lower bound
COPIES_READ_BYTES = 16_000_000
# a marker line is read up to here: a real one is a comment of a few hundred characters, and
# anything past the cut is never scanned (a marker then ends inside the cut, or is none)
MARKER_CHARS = 2_000
# how many distinct targets copies counts (the page shows the ten most common)
TARGETS_CAP = 1_000
_MARKER_HEAD = re.compile(r"(?:#|//)[^\S\n]*Copied from[^\S\n]+([A-Za-z_][A-Za-z0-9_.]*)")
_DEFINITION = re.compile(r"^\s*(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


def parse_copies(params) -> dict:
    return inputs.parse("copies", params)  # as contract/verbs declares it


def parse_marker(text: str, cut: bool = False) -> tuple[str, str | None] | None:
    """``(target, with)`` of a ``# Copied from <dotted.target> [with A->B]`` marker ending
    the line, else None. The line is read up to ``MARKER_CHARS`` (``cut``: it went on past
    ``text``), with no regex that can backtrack: each candidate's head is matched by a
    pattern whose repeats are each followed by a literal or nothing, and its tail checked
    by string methods."""
    if len(text) > MARKER_CHARS:
        text, cut = text[:MARKER_CHARS], True
    for head in _MARKER_HEAD.finditer(text):
        target = head.group(1)
        if len(target) < 2 or target.endswith("."):
            continue
        rest = text[head.end() :]
        if not rest.strip():
            if cut:
                continue  # spaces up to the cut: what follows them is unknown
            return target, None
        if not rest[0].isspace():
            continue
        rest = rest.lstrip()
        if rest.startswith("with") and len(rest) > 4 and rest[4].isspace():
            return target, rest[4:].strip() or None
    return None


def _points_at(target: str, name: str) -> str | None:
    """The part of ``target`` after ``name`` ('' when it is the name itself), or None when
    the marker points elsewhere. ``name`` matches whole dotted segments, anywhere."""
    want = name.split(".")
    parts = target.split(".")
    for i in range(len(parts) - len(want) + 1):
        if parts[i : i + len(want)] == want:
            return ".".join(parts[i + len(want) :])
    return None


def _definition(text: str) -> re.Match | None:
    return _DEFINITION.match(text)


class _Copies:
    """The marker lines pointing at ``name``, as grep streams them: the first ``limit`` in
    the clone's order (git prints paths sorted, lines ascending) kept whole, every one counted
    (total, files, targets); nothing else held."""

    def __init__(self, name: str, limit: int):
        self.name = name
        self.limit = limit
        self.rows: list[dict] = []
        self.total = 0
        self.files = 0
        self.targets: Counter = Counter()
        self._last_path: str | None = None

    def take(self, match: grep_records.Match) -> None:
        marker = parse_marker(match.text, match.cut)
        if marker is None:
            return
        target, with_ = marker
        member = _points_at(target, self.name)
        if member is None:
            return
        self.total += 1
        if match.path != self._last_path:
            self.files += 1
            self._last_path = match.path
        target = one_line(target)
        if target in self.targets or len(self.targets) < TARGETS_CAP:
            self.targets[target] += 1
        if len(self.rows) < self.limit:
            own = _definition(match.text.split("#", 1)[0])
            self.rows.append(
                {
                    "path": match.path,
                    "line": match.line,
                    "target": target,
                    "member": member or None,
                    "own": (own.group(1), own.group(2)) if own else None,
                    "with": one_line(with_) if with_ else None,
                }
            )


async def copies(request: dict, clone: Path, pool=None) -> dict:
    budget = Budget(deadline_s=30.0, call_timeout_s=20.0)
    git = Git(clone, budget)
    head = await head_of(git)
    last = request["name"].rsplit(".", 1)[-1]
    found = _Copies(request["name"], request["limit"])
    split = grep_records.Splitter(found.take, text_bytes=4 * MARKER_CHARS)
    # lines holding both the marker and the name's last segment
    out = await git.run(
        [*GREP, "-F", "-e", "Copied from", "--and", "-e", last, "--"],
        what="git grep (copies)",
        ok_codes=(0, 1),
        keep_bytes=COPIES_READ_BYTES,
        sink=split.feed,
    )
    split.close()
    chosen = sorted(found.rows, key=lambda row: (row["path"], row["line"]))
    # the clone's text, redacted by the marts' catalog before it is quoted
    await redaction.fields(pool, chosen, ("path", "target", "with"))
    for row in chosen:
        row["with"] = clone_text(row["with"]) if row["with"] else None
    wanted = {(row["path"], row["line"] + k) for row in chosen for k in (1, 2)}
    by_place = await _definition_lines(git, sorted({row["path"] for row in chosen}), wanted)
    for row in chosen:
        own = row.pop("own")
        candidates = [(row["line"], own)] if own else []
        for k in (1, 2):
            match = _definition(by_place.get((row["path"], row["line"] + k), ""))
            if match:
                candidates.append((row["line"] + k, (match.group(1), match.group(2))))
        row["copy"] = None
        if candidates:
            where, (kind, name) = candidates[0]
            row["copy"] = {
                "name": name,
                "kind": "class" if kind == "class" else "function",
                "line": where,
            }
    page = {
        "repo": request["repo"],
        "head": head,
        "name": request["name"],
        "marker": "# Copied from <dotted.target> [with A->B]",
        "returned": len(chosen),
        "total": found.total,
        "files": found.files,
        "targets": dict(found.targets.most_common(10)),
        "copies": chosen,
    }
    if not out.complete:
        page["note"] = "more marker lines than were read: the total is a lower bound"
        page["total_is_lower_bound"] = True
    if not found.total:
        page["note"] = (
            f"no `# Copied from` marker in the clone points at {request['name']!r} "
            "(markers are matched on whole dotted segments)"
        )
    page["budget"] = budget.report()
    return page


async def _definition_lines(
    git: Git, paths: list[str], wanted: set[tuple[str, int]]
) -> dict[tuple[str, int], str]:
    """(path, line) -> the start of each ``def``/``class`` line of ``wanted``: where a
    marker's copy starts (its own line or one of the two after it)."""
    found: dict[tuple[str, int], str] = {}

    def keep(match: grep_records.Match) -> None:
        if (match.path, match.line) in wanted:
            found[(match.path, match.line)] = match.text

    for start in range(0, len(paths), 200):  # a bounded command line
        split = grep_records.Splitter(keep, text_bytes=4 * MARKER_CHARS)
        await git.run(
            [
                *GREP,
                *("-E", "-e", r"^[[:space:]]*(async[[:space:]]+)?(def|class)[[:space:]]", "--"),
                *paths[start : start + 200],
            ],
            what="git grep (copies' definitions)",
            ok_codes=(0, 1),
            keep_bytes=COPIES_READ_BYTES,
            sink=split.feed,
        )
        split.close()
    return found
