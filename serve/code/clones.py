"""Which clone a request reads, and the inputs a request may name inside it.

A caller's path is relative to the repository root and stays inside it: absolute paths,
``..`` segments, NUL and control characters are refused with a 400 before git ever runs.
A repository with no clone is a 503 that names the command that makes one.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from relore.contract import patterns, places

MAX_PATH_CHARS = 1000
MAX_LINE = 10_000_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,15}$")


class BadRequest(ValueError):
    """A request we will not run (400)."""


class NotFound(LookupError):
    """Something the clone does not hold (404)."""


class NoClone(RuntimeError):
    """No working clone of the repository on this daemon (503)."""

    def __init__(self, repo: str):
        self.repo = repo
        self.command = f"relored clone --repo {repo}"
        super().__init__(
            f"no working clone of {repo} on this daemon: run `{self.command}` where "
            "`relored serve` runs (the conversation index does not need it; why, symbol, "
            "grep and copies do)"
        )


class NoGrammar(RuntimeError):
    """The daemon cannot parse the clone: no tree-sitter grammar where it runs (503)."""


class TooSlow(RuntimeError):
    """An answer that would take longer than its deadline (503), with how to narrow it."""


def repo(params) -> str:
    value = (params.get("repo") or "").strip()
    try:
        patterns.check_repo(value)
    except ValueError:
        raise BadRequest("repo must be owner/name") from None
    return value


def path(value: str | None, what: str = "path", *, required: bool = True) -> str | None:
    """A path relative to the repository root, normalised (``./`` and ``//`` dropped)."""
    raw = value or ""
    if not raw.strip():
        if required:
            raise BadRequest(f"{what} is required: a path relative to the repository root")
        return None
    if "\x00" in raw or _CONTROL.search(raw):
        raise BadRequest(f"{what} contains a NUL or control character")
    if len(raw) > MAX_PATH_CHARS:
        raise BadRequest(f"{what} is at most {MAX_PATH_CHARS} characters")
    text = raw.strip().replace("\\", "/")
    if text.startswith("/") or re.match(r"^[A-Za-z]:/", text) or text.startswith("~"):
        raise BadRequest(
            f"{what} {raw!r} is absolute: give it relative to the repository root "
            "(e.g. src/pkg/module.py)"
        )
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BadRequest(f"{what} {raw!r} leaves the repository: `..` is not allowed")
    if not parts:
        raise BadRequest(f"{what} {raw!r} names no file")
    return "/".join(parts)


def line(value: str | None) -> int:
    try:
        number = int(value or "")
    except ValueError:
        raise BadRequest("line must be a whole number, 1 or more") from None
    if not 1 <= number <= MAX_LINE:
        raise BadRequest(f"line must be between 1 and {MAX_LINE:,}")
    return number


def identifier(value: str | None, what: str = "name", *, dotted: bool = False) -> str:
    text = (value or "").strip()
    if "\x00" in text:
        raise BadRequest(f"{what} contains a NUL character")
    pattern = _DOTTED if dotted else _IDENTIFIER
    if len(text) > 300 or not pattern.match(text):
        shape = "an identifier, or a dotted one (a.b.C)" if dotted else "an identifier"
        raise BadRequest(f"{what} must be {shape}, got {text[:80]!r}")
    return text


def limit(value: str | None, default: int, cap: int) -> int:
    if value in (None, ""):
        return default
    try:
        number = int(value)
    except ValueError:
        raise BadRequest("limit must be a whole number") from None
    if not 1 <= number <= cap:
        raise BadRequest(f"limit must be between 1 and {cap}")
    return number


def flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def clone_for(repo_name: str, env=None) -> Path:
    env = os.environ if env is None else env
    where = places.clone_dir(repo_name, env)
    if not (where / ".git").is_dir():
        raise NoClone(repo_name)
    return where
