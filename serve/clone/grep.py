"""``grep``: ``git grep`` over the working clone at its HEAD, with caps — at most
``CLONE_ROWS`` lines returned (``contract/limits.py``), every match counted (``total``), each line cut to ``LINE_CHARS``
and quoted: a source line is untrusted text.

git's output is split as it streams (``grep_records``): linear, a line cut to what the page
shows while it is read, so no answer holds the event loop whatever a file's lines are.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from relore.serve import inputs
from relore.serve.clone import grep_records, redaction
from relore.serve.clone.git import Budget, Git, GitFailed, GitTimeout
from relore.serve.clone.reading import GREP, LINE_CHARS, clone_text, cut, head_of
from relore.serve.errors import BadRequest

# grep stops reading after this much output: its total is then a lower bound
GREP_STOP_BYTES = 32_000_000
# what of a grep line is kept while it streams: LINE_CHARS characters of UTF-8 at most, and
# room for a secret that starts inside them to be read whole by the redaction (no token in
# the catalog runs to 1,000 characters on one line), so a cut never shows half of one
GREP_TEXT_BYTES = 4 * LINE_CHARS + 1_000


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
        {"path": m.path, "line": m.line, "text": clone_text(cut(m.text, m.cut))} for m in matches
    ]


def parse_grep(params) -> dict:
    return inputs.parse("grep", params)  # as contract/verbs declares it


async def grep(request: dict, clone: Path, pool=None) -> dict:
    budget = Budget(deadline_s=30.0, call_timeout_s=20.0)
    git = Git(clone, budget)
    head = await head_of(git)
    args = [*GREP]
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
