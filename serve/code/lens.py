"""``symbol``, ``grep`` and ``copies``, answered from the working clone at its HEAD.

- ``symbol``: the definitions of a name, by the client's own code lens
  (``relore.client.code``: the same providers and engine ``relore defs`` runs on the
  caller's tree), here over the clone. Its parse cache lives beside the clones, never in one.
  At most ``SYMBOL_CONCURRENT`` parses run at once, and a parse stops at the request's
  deadline (the thread checks before each file), never running on after the 503.
- ``grep``: ``git grep`` with caps — at most ``GREP_CAP`` lines returned, every match counted
  (``total``), each line cut to ``LINE_CHARS`` and quoted: a source line is untrusted text.
- ``copies``: the ``# Copied from X`` markers (HuggingFace's convention, checked by their
  ``make fix-copies``) whose target is the name, each with the definition under it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
from collections import Counter
from pathlib import Path

from relore.client.code import DEFS_CAP
from relore.contract import limits
from relore.contract.envelope import one_line, quote
from relore.serve import inputs
from relore.serve.code import redaction
from relore.serve.code.git import Budget, Git, GitFailed, GitTimeout
from relore.serve.errors import BadRequest, NotFound, Unavailable

GREP_CAP = COPIES_CAP = limits.CLONE_ROWS
LINE_CHARS = 200
MAX_PATTERN_CHARS = limits.MAX_PATTERN_CHARS
SYMBOL_TIMEOUT_S = 60.0
# at most this many `symbol` parses run at once per daemon (each is a thread of tree-sitter
# work); the wait for one counts against the request's deadline
SYMBOL_CONCURRENT = 2
# grep stops reading after this much output: its total is then a lower bound
GREP_STOP_BYTES = 32_000_000
_MARKER = re.compile(
    r"(?:#|//)\s*Copied from\s+([A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_])(?:\s+with\s+(.*?))?\s*$"
)
_DEFINITION = re.compile(r"^\s*(?:async\s+)?(def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


async def _head(git: Git) -> str:
    return (await git.run(["rev-parse", "HEAD"], what="git rev-parse HEAD")).text.strip()


# ``git grep -n -z`` prints ``path NUL line NUL text LF`` for each match: a path may hold a
# newline (git allows any byte but NUL), a line's text never does. Read record by record,
# never line by line, and never with context (``-A``): its ``--`` separator line would be
# indistinguishable from a path that starts with ``--`` and a newline.
_RECORD = re.compile(r"([^\x00]*)\x00([0-9]+)\x00([^\n]*)\n")


def _records(text: str) -> list[tuple[str, int, str]]:
    """``git grep -n -z`` output (no context lines): (path, line, text) per match."""
    return [(m.group(1), int(m.group(2)), m.group(3)) for m in _RECORD.finditer(text)]


def _cut(text: str) -> str:
    text = text.rstrip()
    return text if len(text) <= LINE_CHARS else text[: LINE_CHARS - 1] + "…"


# --- grep -----------------------------------------------------------------------------------


def parse_grep(params) -> dict:
    pattern = params.get("pattern") or ""
    if not pattern:
        raise BadRequest("pattern is required")
    if "\x00" in pattern or "\n" in pattern:
        raise BadRequest("the pattern contains a NUL or a line break")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise BadRequest(f"the pattern is at most {MAX_PATTERN_CHARS} characters")
    return {
        "repo": inputs.repo(params),
        "pattern": pattern,
        "fixed": inputs.flag(params, "fixed"),
        "ignore_case": inputs.flag(params, "ignore_case"),
        "path": inputs.path(params, required=False),
        "limit": inputs.limit(params, GREP_CAP),
    }


async def grep(request: dict, clone: Path, pool=None) -> dict:
    budget = Budget(deadline_s=30.0, call_timeout_s=20.0)
    git = Git(clone, budget)
    head = await _head(git)
    args = ["grep", "-n", "-z", "-I", "--no-color", "--full-name"]
    args += ["-F"] if request["fixed"] else ["-E"]
    if request["ignore_case"]:
        args.append("-i")
    args += ["-e", request["pattern"], "--"]
    if request["path"]:
        args.append(request["path"])
    try:
        out = await git.run(
            args,
            what="git grep",
            ok_codes=(0, 1),  # 1: nothing matched
            keep_bytes=256_000,
            stop_after_bytes=GREP_STOP_BYTES,
            count=b"\x00",  # two per match, whatever its path holds
        )
    except GitFailed as exc:
        raise BadRequest(f"git grep refused the pattern: {exc.stderr or exc}") from None
    except GitTimeout:
        out = None
    rows = _records(out.text) if out else []
    chosen = await redaction.records(pool, rows[: request["limit"]])
    page = {
        "repo": request["repo"],
        "head": head,
        "pattern": request["pattern"],
        "mode": "fixed" if request["fixed"] else "extended regex",
        "ignore_case": request["ignore_case"],
        "path": request["path"],
        "returned": len(chosen),
        "total": out.lines // 2 if out else len(rows),
        "total_is_lower_bound": bool(out is None or out.stopped),
        "matches": [
            {"path": path, "line": number, "text": quote(_cut(text))}
            for path, number, text in chosen
        ],
    }
    if out is not None and out.complete:
        page["files"] = len({path for path, _, _ in rows})
    if out is None:
        page["note"] = "git grep timed out: nothing was counted"
    elif out.stopped:
        page["note"] = f"git grep was stopped after {GREP_STOP_BYTES:,} bytes of matches"
    page["budget"] = budget.report()
    return page


# --- copies ---------------------------------------------------------------------------------


def parse_copies(params) -> dict:
    return {
        "repo": inputs.repo(params),
        "name": inputs.identifier(params, dotted=True),
        "limit": inputs.limit(params, COPIES_CAP),
    }


def _points_at(target: str, name: str) -> str | None:
    """The part of ``target`` after ``name`` ('' when it is the name itself), or None when
    the marker points elsewhere. ``name`` matches whole dotted segments, anywhere."""
    want = name.split(".")
    parts = target.split(".")
    for i in range(len(parts) - len(want) + 1):
        if parts[i : i + len(want)] == want:
            return ".".join(parts[i + len(want) :])
    return None


async def copies(request: dict, clone: Path, pool=None) -> dict:
    budget = Budget(deadline_s=30.0, call_timeout_s=20.0)
    git = Git(clone, budget)
    head = await _head(git)
    last = request["name"].rsplit(".", 1)[-1]
    # lines holding both the marker and the name's last segment
    marker_grep = ["grep", "-n", "-z", "-I", "--no-color", "--full-name", "-F"]
    out = await git.run(
        [*marker_grep, "-e", "Copied from", "--and", "-e", last, "--"],
        what="git grep (copies)",
        ok_codes=(0, 1),
        keep_bytes=16_000_000,
    )
    records = await redaction.records(pool, _records(out.text))
    by_place = await _definition_lines(git, sorted({path for path, _, _ in records}))
    found = []
    for path, number, text in records:
        marker = _MARKER.search(text)
        if not marker:
            continue
        member = _points_at(marker.group(1), request["name"])
        if member is None:
            continue
        copy = None
        own = _DEFINITION.match(text.split("#", 1)[0])
        candidates = [(number, own)] if own else []
        candidates += [
            (number + k, _DEFINITION.match(by_place.get((path, number + k), ""))) for k in (1, 2)
        ]
        for where, match in candidates:
            if match:
                kind = "class" if match.group(1) == "class" else "function"
                copy = {"name": match.group(2), "kind": kind, "line": where}
                break
        found.append(
            {
                "path": path,
                "line": number,
                "target": one_line(marker.group(1)),
                "member": member or None,
                "copy": copy,
                "with": quote(one_line(marker.group(2))) if marker.group(2) else None,
            }
        )
    found.sort(key=lambda row: (row["path"], row["line"]))
    chosen = found[: request["limit"]]
    targets = Counter(row["target"] for row in found)
    page = {
        "repo": request["repo"],
        "head": head,
        "name": request["name"],
        "marker": "# Copied from <dotted.target> [with A->B]",
        "returned": len(chosen),
        "total": len(found),
        "files": len({row["path"] for row in found}),
        "targets": dict(targets.most_common(10)),
        "copies": chosen,
    }
    if not out.complete:
        page["note"] = "more marker lines than were read: the total is a lower bound"
        page["total_is_lower_bound"] = True
    if not found:
        page["note"] = (
            f"no `# Copied from` marker in the clone points at {request['name']!r} "
            "(markers are matched on whole dotted segments)"
        )
    page["budget"] = budget.report()
    return page


async def _definition_lines(git: Git, paths: list[str]) -> dict[tuple[str, int], str]:
    """(path, line) -> text of every ``def``/``class`` line in ``paths``: where a marker's
    copy starts (its own line or one of the two after it)."""
    found: dict[tuple[str, int], str] = {}
    for start in range(0, len(paths), 200):  # a bounded command line
        out = await git.run(
            [
                *("grep", "-n", "-z", "-I", "--no-color", "--full-name", "-E"),
                *("-e", r"^[[:space:]]*(async[[:space:]]+)?(def|class)[[:space:]]", "--"),
                *paths[start : start + 200],
            ],
            what="git grep (copies' definitions)",
            ok_codes=(0, 1),
            keep_bytes=16_000_000,
        )
        found.update(((p, n), t) for p, n, t in _records(out.text))
    return found


# --- symbol ---------------------------------------------------------------------------------


def parse_symbol(params) -> dict:
    return {
        "repo": inputs.repo(params),
        "name": inputs.identifier(params),
        "path": inputs.path(params, required=False),
        "limit": inputs.limit(params, DEFS_CAP),
    }


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
    from relore.client.code import index, registry

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
        row["text"] = quote(row.get("text") or "")
    page.update(repo=request["repo"], head=head, path=request["path"])
    page["budget"] = budget.report()
    return page
