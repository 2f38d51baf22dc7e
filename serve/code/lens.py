"""``symbol``, ``grep`` and ``copies``, answered from the working clone at its HEAD.

- ``symbol``: the definitions of a name, by the client's own code lens
  (``relore.lens``: the same providers and engine ``relore defs`` runs on the
  caller's tree), here over the clone. Its parse cache lives beside the clones, never in one.
  At most ``SYMBOL_CONCURRENT`` parses run at once, and a parse stops at the request's
  deadline (the thread checks before each file), never running on after the 503.
- ``grep``: ``git grep`` with caps — at most ``CLONE_ROWS`` lines returned (``contract/limits.py``), every match counted
  (``total``), each line cut to ``LINE_CHARS`` and quoted: a source line is untrusted text.
- ``copies``: the ``# Copied from X`` markers (HuggingFace's convention, checked by their
  ``make fix-copies``) whose target is the name, each with the definition under it.

git's output is split as it streams (``grep_records``): linear, a line cut to what the page
shows while it is read, so no answer holds the event loop whatever a file's lines are.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import threading
from collections import Counter
from pathlib import Path

from relore.contract.envelope import one_line, quote
from relore.contract.sanitize import Quoted
from relore.serve import inputs
from relore.serve.code import grep_records, redaction
from relore.serve.code.git import Budget, Git, GitFailed, GitTimeout
from relore.serve.errors import BadRequest, NotFound, Unavailable

LINE_CHARS = 200
SYMBOL_TIMEOUT_S = 60.0
# at most this many `symbol` parses run at once per daemon (each is a thread of tree-sitter
# work); the wait for one counts against the request's deadline
SYMBOL_CONCURRENT = 2
# grep stops reading after this much output: its total is then a lower bound
GREP_STOP_BYTES = 32_000_000
# copies reads this much marker output; past it the total is a lower bound
COPIES_READ_BYTES = 16_000_000
# what of a grep line is kept while it streams: LINE_CHARS characters of UTF-8 at most, and
# room for a secret that starts inside them to be read whole by the redaction (no token in
# the catalog runs to 1,000 characters on one line), so a cut never shows half of one
GREP_TEXT_BYTES = 4 * LINE_CHARS + 1_000
# a marker line is read up to here: a real one is a comment of a few hundred characters, and
# anything past the cut is never scanned (a marker then ends inside the cut, or is none)
MARKER_CHARS = 2_000
# how many distinct targets copies counts (the page shows the ten most common)
TARGETS_CAP = 1_000
_MARKER_HEAD = re.compile(r"(?:#|//)[^\S\n]*Copied from[^\S\n]+([A-Za-z_][A-Za-z0-9_.]*)")
_DEFINITION = re.compile(r"^\s*(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


async def _head(git: Git) -> str:
    return (await git.run(["rev-parse", "HEAD"], what="git rev-parse HEAD")).text.strip()


# ``git grep -n -z`` prints ``path NUL line NUL text LF`` for each match: a path may hold a
# newline (git allows any byte but NUL), a line's text never does. It is split as it streams
# (grep_records.py), never by a regex over a cut buffer (one whose cut fell inside a 13 MB line
# once held the daemon for minutes), and never with context (``-A``): its ``--`` separator
# line would be indistinguishable from a path that starts with ``--`` and a newline.
_GREP = ("grep", "-n", "-z", "-I", "--no-color", "--full-name")


def _cut(text: str, cut: bool = False) -> str:
    """A line shortened to ``LINE_CHARS``; ``cut``: it was longer than ``text`` already."""
    if not cut:
        text = text.rstrip()
    return text if len(text) <= LINE_CHARS and not cut else text[: LINE_CHARS - 1] + "…"


def clone_text(text: str) -> Quoted:
    """A line read from the clone as it goes on a page, quoted: the one place a clone's
    text enters a grep, copies or symbol page."""
    return quote(text)


async def _redacted(pool, matches: list[grep_records.Match]) -> list[grep_records.Match]:
    """The matches with their paths and texts through the marts' secret catalog (one
    query), before any cut to ``LINE_CHARS``: a cut never leaves half a secret."""
    done = await redaction.records(pool, [(m.path, m.line, m.text) for m in matches])
    return [
        dataclasses.replace(m, path=path, text=text)
        for m, (path, _, text) in zip(matches, done, strict=True)
    ]


def _lines(matches: list[grep_records.Match]) -> list[dict]:
    """The grep page's lines: each match's text cut to ``LINE_CHARS`` and quoted."""
    return [
        {"path": m.path, "line": m.line, "text": clone_text(_cut(m.text, m.cut))} for m in matches
    ]


# --- grep -----------------------------------------------------------------------------------


def parse_grep(params) -> dict:
    return inputs.parse("grep", params)  # as contract/verbs declares it


async def grep(request: dict, clone: Path, pool=None) -> dict:
    budget = Budget(deadline_s=30.0, call_timeout_s=20.0)
    git = Git(clone, budget)
    head = await _head(git)
    args = [*_GREP]
    args += ["-F"] if request["fixed"] else ["-E"]
    if request["ignore_case"]:
        args.append("-i")
    args += ["-e", request["pattern"], "--"]
    if request["path"]:
        args.append(request["path"])
    chosen: list[grep_records.Match] = []

    def keep(match: grep_records.Match) -> bool:
        chosen.append(match)
        return len(chosen) < request["limit"]

    split = grep_records.Splitter(keep, text_bytes=GREP_TEXT_BYTES)
    try:
        out = await git.run(
            args,
            what="git grep",
            ok_codes=(0, 1),  # 1: nothing matched
            keep_bytes=GREP_STOP_BYTES,
            stop_after_bytes=GREP_STOP_BYTES,
            sink=split.feed,
        )
    except GitFailed as exc:
        raise BadRequest(f"git grep refused the pattern: {exc.stderr or exc}") from None
    except GitTimeout:
        out = None
    split.close()
    if out is None:
        chosen.clear()  # a timed-out grep counts nothing (its rows would be a partial view)
    chosen = await _redacted(pool, chosen)
    page = {
        "repo": request["repo"],
        "head": head,
        "pattern": request["pattern"],
        "mode": "fixed" if request["fixed"] else "extended regex",
        "ignore_case": request["ignore_case"],
        "path": request["path"],
        "returned": len(chosen),
        "total": split.total if out else 0,
        "total_is_lower_bound": bool(out is None or out.stopped),
        "matches": _lines(chosen),
    }
    if out is not None and not out.stopped:
        page["files"] = split.files
    if out is None:
        page["note"] = "git grep timed out: nothing was counted"
    elif out.stopped:
        page["note"] = f"git grep was stopped after {GREP_STOP_BYTES:,} bytes of matches"
    page["budget"] = budget.report()
    return page


# --- copies ---------------------------------------------------------------------------------


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
    head = await _head(git)
    last = request["name"].rsplit(".", 1)[-1]
    found = _Copies(request["name"], request["limit"])
    split = grep_records.Splitter(found.take, text_bytes=4 * MARKER_CHARS)
    # lines holding both the marker and the name's last segment
    out = await git.run(
        [*_GREP, "-F", "-e", "Copied from", "--and", "-e", last, "--"],
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
                *_GREP,
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


# --- symbol ---------------------------------------------------------------------------------


def parse_symbol(params) -> dict:
    return inputs.parse("symbol", params)  # as contract/verbs declares it


def _cache_env(clone: Path) -> dict:
    env = dict(os.environ)
    if not env.get("RELORE_CODE_CACHE"):
        # beside the clones (owner names never start with a dot), never inside one
        env["RELORE_CODE_CACHE"] = str(clone.parent.parent / ".code-cache")
    return env


_parse_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}


@contextlib.asynccontextmanager
async def _parse_slot(budget: Budget):
    loop = asyncio.get_running_loop()
    slots = _parse_slots.get(loop)
    if slots is None:
        _parse_slots.clear()  # one daemon, one loop: a new loop (a test) starts afresh
        slots = _parse_slots[loop] = asyncio.Semaphore(SYMBOL_CONCURRENT)
    await asyncio.wait_for(slots.acquire(), max(budget.remaining(), 0))
    try:
        yield
    finally:
        slots.release()


async def symbol(request: dict, clone: Path, pool=None) -> dict:
    from relore.lens import index, registry

    budget = Budget(deadline_s=SYMBOL_TIMEOUT_S)
    git = Git(clone, budget)
    head = await _head(git)
    scope = request["path"] or "."
    if request["path"] and not (clone / request["path"]).resolve().is_relative_to(clone.resolve()):
        raise BadRequest("path leaves the repository")
    stop = threading.Event()
    try:
        async with _parse_slot(budget):
            parsing = asyncio.ensure_future(
                asyncio.to_thread(
                    index.defs,
                    request["name"],
                    scope,
                    _cache_env(clone),
                    limit=request["limit"],
                    cwd=str(clone),
                    stop=stop.is_set,
                )
            )
            try:
                page = await asyncio.wait_for(asyncio.shield(parsing), budget.remaining())
            except TimeoutError:
                stop.set()  # the thread ends at its next file, and holds its slot till then
                with contextlib.suppress(index.Stopped):
                    await parsing
                raise
            finally:
                stop.set()  # cancelled too (the client went away): nothing parses on
    except index.PathNotFound:
        raise NotFound(f"{request['path']} is not in the clone at HEAD") from None
    except registry.GrammarMissing as exc:
        raise Unavailable(str(exc)) from None
    except (TimeoutError, index.Stopped):
        budget.timed_out.append(f"definitions: stopped after {SYMBOL_TIMEOUT_S:.0f}s")
        raise Unavailable(
            f"reading the clone for {request['name']!r} took over {SYMBOL_TIMEOUT_S:.0f}s: "
            "narrow it with path=DIR"
        ) from None
    page.pop("root", None)
    page.get("files", {}).pop("cache", None)
    page.pop("offset", None)
    page.pop("skipped_before", None)
    await redaction.fields(
        pool, page.get("definitions", []), ("path", "qualified", "scope", "text")
    )
    for row in page.get("definitions", []):
        row["text"] = clone_text(row.get("text") or "")
    page.update(repo=request["repo"], head=head, path=request["path"])
    page["budget"] = budget.report()
    return page
