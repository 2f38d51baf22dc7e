"""``relore``'s argument types: each turns one command-line string into a value or refuses it
(``argparse.ArgumentTypeError``, exit 2) before any request is made. One per kind of
parameter (``KINDS``: what ``definition.py`` gives argparse for a declared ``Param``); the
numbers are the declaration's, the daemon's own (``relore.contract.limits``). Stdlib only.
"""

from __future__ import annotations

import argparse
import re

from relore.contract import limits, patterns


def repo(value: str) -> str:
    if not patterns.is_repo(value):
        raise argparse.ArgumentTypeError(f"expected owner/name, got {value!r}")
    return value


def owner(value: str) -> str:
    if not patterns.is_owner(value):
        raise argparse.ArgumentTypeError(f"expected a GitHub user or organisation, got {value!r}")
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

    return parse


def _query(most: int, pasted: int):
    """Search text: at most ``most``, or ``pasted`` for a pasted traceback
    (``contract.patterns.is_pasted_traceback``), which the daemon cuts to its error line and
    deepest frames and says so."""
    plain = _text(
        "query",
        most,
        f" (a pasted traceback: {pasted}): paste the error line, not the whole log",
    )
    long = _text("pasted traceback", pasted, ": paste its last frames")

    def parse(value: str) -> str:
        if len(value) > most and patterns.is_pasted_traceback(value):
            return long(value)
        return plain(value)

    return parse


query = _query(limits.MAX_QUERY_CHARS, limits.MAX_PASTE_CHARS)  # search's; stdin's too


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

    return parse


def _whole(param):
    """A declared number: its bounds, and the refusal said in its ``unit``."""
    low, high = param.low, param.high
    if high is not None:
        what = f"at most {high} {param.unit or 'rows per page'}, at least {low}"
    else:
        what = "expected 0 or more" if low == 0 else f"at least {low}"
    return whole(low, high, what)


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


# kind -> what argparse is given as the type of a declared parameter of that kind (None: the
# string as given; a choice is argparse's `choices`, a flag `store_true`, a list `append`)
KINDS = {
    "string": None,
    "text": lambda p: _text(p.what or p.name, p.most, p.hint),
    "query": lambda p: _query(p.most, p.pasted),
    "pattern": lambda p: _text(p.what or p.name, p.most, p.hint),
    "repo": lambda p: repo,
    "repos": lambda p: repo,
    "owner": lambda p: owner,
    "date": None,
    "path": None,
    "identifier": lambda p: identifier,
    "dotted": lambda p: dotted_name,
    "session": lambda p: session,
    "thread_ref": lambda p: thread_ref,
    "path_line": lambda p: path_line,
    "int": _whole,
    "limit": _whole,
    "choice": None,
    "flag": None,
    "many": None,
    "files": None,
    "rule_ids": None,
}


def for_param(param):
    """The argparse type of a declared parameter, or None."""
    make = KINDS[param.kind]
    return make(param) if make is not None else None
