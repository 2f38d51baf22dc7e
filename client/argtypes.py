"""``relore``'s argument types: each turns one command-line string into a value or refuses it
(``argparse.ArgumentTypeError``, exit 2) before any request is made. The numbers are the
daemon's own (``relore.contract.limits``). Stdlib only.
"""

from __future__ import annotations

import argparse
import re

from relore.contract import limits, patterns


def repo(value: str) -> str:
    if not patterns.is_repo(value):
        raise argparse.ArgumentTypeError(f"expected owner/name, got {value!r}")
    return value


def _text(what: str, most: int, hint: str = ""):
    """An argparse type: text of at most ``most`` characters without NUL (the daemon's own
    limit, from ``relore.contract.limits``: refused here before a request is made)."""

    def parse(value: str) -> str:
        if len(value) > most:
            raise argparse.ArgumentTypeError(
                f"the {what} is {len(value)} characters; at most {most}{hint}"
            )
        if "\x00" in value:
            raise argparse.ArgumentTypeError(f"the {what} contains a NUL character")
        return value

    parse.max_chars = most  # relore mcp states it in each tool's input schema
    return parse


_plain_query = _text(
    "query",
    limits.MAX_QUERY_CHARS,
    f" (a pasted traceback: {limits.MAX_PASTE_CHARS}): paste the error line, not the whole log",
)
_pasted = _text("pasted traceback", limits.MAX_PASTE_CHARS, ": paste its last frames")


def query(value: str) -> str:
    """Search text: at most ``MAX_QUERY_CHARS``, or ``MAX_PASTE_CHARS`` for a pasted
    traceback (``contract.patterns.is_pasted_traceback``), which the daemon cuts to its
    error line and deepest frames and says so."""
    if len(value) > limits.MAX_QUERY_CHARS and patterns.is_pasted_traceback(value):
        return _pasted(value)
    return _plain_query(value)


query.max_chars = limits.MAX_PASTE_CHARS  # relore mcp states it in the tool's input schema
description = _text(
    "description", limits.MAX_QUERY_CHARS, ": one or two sentences about the change"
)
pattern = _text("pattern", limits.MAX_PATTERN_CHARS)
focus = _text("focus", limits.MAX_FOCUS_CHARS)
task = _text("task", limits.MAX_TASK_CHARS, ": one sentence about the change")


def thread_ref(value: str) -> tuple[str | None, int, str | None]:
    """(repo, number, comment): ``contract.patterns.parse_thread_ref``, a pasted GitHub URL
    included (its ``#issuecomment-N`` names a comment)."""
    try:
        return patterns.parse_thread_ref(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def whole(low: int, high: int | None, what: str):
    """An argparse type: a whole number in [low, high], refused with ``what`` otherwise."""

    def parse(value: str) -> int:
        try:
            n = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError("expected a whole number") from None
        if n < low or (high is not None and n > high):
            raise argparse.ArgumentTypeError(what)
        return n

    parse.bounds = (low, high)  # relore mcp states them in each tool's input schema
    return parse


limit = whole(1, limits.MAX_HITS, f"at most {limits.MAX_HITS} hits per page, at least 1")
precedent_limit = whole(
    1, limits.MAX_PRECEDENT, f"at most {limits.MAX_PRECEDENT} pull requests, at least 1"
)
comments = whole(
    1, limits.THREAD_PAGE, f"at most {limits.THREAD_PAGE} comments per page, at least 1"
)
offset = whole(0, None, "expected 0 or more")


def rows(cap: int):
    return whole(1, cap, f"at most {cap} rows per page, at least 1")


max_tokens = whole(limits.MIN_MAX_TOKENS, None, f"at least {limits.MIN_MAX_TOKENS}")


def session(value: str) -> str:
    from relore.client import rules  # here: hashlib and pathlib load for `rules` alone

    if not rules.valid_session(value):
        raise argparse.ArgumentTypeError("1-128 characters of letters, digits and ._:@-")
    return value


_PATH_LINE = re.compile(r"^(.+?)(?::|#L)([0-9]+)$")


def path_line(value: str) -> tuple[str, int]:
    """``PATH:LINE`` (or GitHub's ``PATH#L12``), the path relative to the repository root."""
    match = _PATH_LINE.match(value.strip())
    if not match or "\x00" in value:
        raise argparse.ArgumentTypeError(f"expected PATH:LINE, e.g. src/app.py:42, got {value!r}")
    if int(match.group(2)) < 1:
        raise argparse.ArgumentTypeError("lines are numbered from 1")
    return match.group(1), int(match.group(2))


def identifier(value: str) -> str:
    if len(value) > patterns.MAX_NAME_CHARS or not patterns.IDENTIFIER_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(f"expected an identifier, got {value!r}")
    return value


def dotted_name(value: str) -> str:
    if len(value) > patterns.MAX_NAME_CHARS or not patterns.DOTTED_NAME_RE.fullmatch(value):
        raise argparse.ArgumentTypeError(
            f"expected an identifier (or a.dotted.Name), got {value!r}"
        )
    return value


clone_rows = whole(1, limits.CLONE_ROWS, f"at most {limits.CLONE_ROWS} rows per page, at least 1")
