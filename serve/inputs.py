"""What a caller names, parsed: one parser per shape, used by every route that takes it.

Each reads its parameter from the request's query (a Starlette ``QueryParams``, or any
mapping with ``get``; ``getlist`` where a parameter repeats) and returns it checked, or
raises ``errors.BadRequest`` with the words every route says for that shape. An empty value
is an absent one (as an HTML form sends it).
"""

from __future__ import annotations

import re
from datetime import date as _date

from relore.contract import limits, patterns
from relore.serve.errors import BadRequest

REPO_SHAPE = "repo must be owner/name"
MAX_PATH_CHARS = 1000
MAX_LINE = 10_000_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_TRUE = ("1", "true", "yes", "on")


def _value(params, name: str) -> str | None:
    value = params.get(name)
    return value if value not in (None, "") else None


def _values(params, name: str) -> list[str]:
    getter = getattr(params, "getlist", None)
    if getter is not None:
        return list(getter(name))
    value = params.get(name)
    if value in (None, ""):
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def repo(params, *, required: bool = True) -> str | None:
    """``owner/name`` (``contract.patterns.is_repo``: never ``.``/``..`` on either side)."""
    value = (_value(params, "repo") or "").strip()
    if not value:
        if required:
            raise BadRequest(REPO_SHAPE)
        return None
    if not patterns.is_repo(value):
        raise BadRequest(REPO_SHAPE)
    return value


def whole(
    params,
    name: str,
    *,
    low: int,
    high: int | None = None,
    default: int | None = None,
    required: bool = True,
) -> int | None:
    """A whole number in ``[low, high]``; when absent, ``default``, else None when not
    ``required``."""
    raw = _value(params, name)
    shape = (
        f"{name} must be a whole number from {low} to {high:,}"
        if high is not None
        else f"{name} must be a whole number, at least {low:,}"
    )
    if raw is None:
        if default is not None or not required:
            return default
        raise BadRequest(shape)
    try:
        value = int(raw)
    except ValueError:
        raise BadRequest(shape) from None
    if value < low or (high is not None and value > high):
        raise BadRequest(shape)
    return value


def limit(params, cap: int, default: int | None = None) -> int:
    """How many rows a page may hold: 1 to the route's cap (the cap when absent)."""
    return whole(params, "limit", low=1, high=cap, default=cap if default is None else default)


def number(params) -> int:
    """A thread number (an issue's or a pull request's)."""
    raw = _value(params, "number")
    try:
        return int(raw or "")
    except ValueError:
        raise BadRequest("number must be a thread number") from None


def line(params) -> int:
    """A 1-based line number."""
    return whole(params, "line", low=1, high=MAX_LINE)


def choice(params, name: str, options: tuple[str, ...], default: str | None = None) -> str | None:
    value = _value(params, name)
    if value is None:
        return default
    if value not in options:
        raise BadRequest(f"{name} must be one of {', '.join(options)}")
    return value


def text(params, name: str, max_chars: int, *, what: str | None = None) -> str | None:
    """Free text of at most ``max_chars`` characters (``what`` names it in the message)."""
    value = _value(params, name)
    if value is None:
        return None
    label = what or name
    if "\x00" in value:
        raise BadRequest(f"{label} contains a NUL character")
    if len(value) > max_chars:
        raise BadRequest(f"{label} is {len(value)} characters; at most {max_chars}")
    return value


def many(params, name: str, max_values: int, max_chars: int) -> tuple[str, ...]:
    """A repeated parameter: its non-blank values, trimmed, each once, in order."""
    cleaned = tuple(dict.fromkeys(v.strip() for v in _values(params, name) if v and v.strip()))
    if len(cleaned) > max_values:
        raise BadRequest(f"at most {max_values} --{name} values")
    for value in cleaned:
        if len(value) > max_chars or "\x00" in value:
            raise BadRequest(f"--{name} is at most {max_chars} characters, without NUL")
    return cleaned


def date(params, name: str) -> str | None:
    """A real calendar date in ASCII digits, YYYY-MM-DD: ``\\d`` also takes other scripts'
    digits, and a 2024-13-45 that reached ``::date`` was a database error (a 503)."""
    value = _value(params, name)
    if value is None:
        return None
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
        raise BadRequest(f"{name} must be a date, YYYY-MM-DD")
    try:
        _date.fromisoformat(value)
    except ValueError:
        raise BadRequest(f"{name} must be a date, YYYY-MM-DD") from None
    return value


def flag(params, name: str) -> bool:
    return (_value(params, name) or "").strip().lower() in _TRUE


def session(params) -> str | None:
    value = _value(params, "session")
    if value is not None and not patterns.is_session(value):
        raise BadRequest("session must be 1-128 characters of letters, digits and ._:@-")
    return value


def session_token(params) -> str | None:
    """The token a rules reply carried, sent back; only its length is refused here (a token
    that does not verify starts the session afresh, and the reply says why)."""
    value = text(params, "session_token", limits.MAX_SESSION_TOKEN_CHARS, what="session_token")
    return value or None


def rule_ids(params, name: str, max_values: int) -> list[str]:
    values = _values(params, name)
    if len(values) > max_values or not all(patterns.RULE_ID_RE.fullmatch(v) for v in values):
        raise BadRequest(f"{name} takes at most {max_values} rule ids")
    return values


def output_format(params) -> str:
    """``format=json`` (the default) or ``format=text``: the text ``relore`` prints."""
    return choice(params, "format", ("json", "text"), "json")


def path(params, name: str = "path", *, required: bool = True) -> str | None:
    """A path relative to the repository root, normalised (``./`` and ``//`` dropped); never
    absolute, never through ``..``, no NUL or control character."""
    raw = params.get(name) or ""
    if not raw.strip():
        if required:
            raise BadRequest(f"{name} is required: a path relative to the repository root")
        return None
    if "\x00" in raw or _CONTROL.search(raw):
        raise BadRequest(f"{name} contains a NUL or control character")
    if len(raw) > MAX_PATH_CHARS:
        raise BadRequest(f"{name} is at most {MAX_PATH_CHARS} characters")
    clean = raw.strip().replace("\\", "/")
    if clean.startswith("/") or re.match(r"^[A-Za-z]:/", clean) or clean.startswith("~"):
        raise BadRequest(
            f"{name} {raw!r} is absolute: give it relative to the repository root "
            "(e.g. src/pkg/module.py)"
        )
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BadRequest(f"{name} {raw!r} leaves the repository: `..` is not allowed")
    if not parts:
        raise BadRequest(f"{name} {raw!r} names no file")
    return "/".join(parts)


def identifier(params, name: str = "name", *, dotted: bool = False) -> str:
    """An identifier (``Foo``), or with ``dotted`` a dotted one (``a.b.C``)."""
    value = (params.get(name) or "").strip()
    if "\x00" in value:
        raise BadRequest(f"{name} contains a NUL character")
    pattern = patterns.DOTTED_NAME_RE if dotted else patterns.IDENTIFIER_RE
    if len(value) > patterns.MAX_NAME_CHARS or not pattern.fullmatch(value):
        shape = "an identifier, or a dotted one (a.b.C)" if dotted else "an identifier"
        raise BadRequest(f"{name} must be {shape}, got {value[:80]!r}")
    return value
