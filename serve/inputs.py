"""What a caller names, parsed: ``parse(verb, params)`` reads every parameter a verb's
declaration (``contract/verbs``) puts on its route, each by the parser of its kind (``KINDS``).

Each kind's parser reads its parameter from the request's query (a Starlette
``QueryParams``, or any mapping with ``get``; ``getlist`` where a parameter repeats) and
returns it checked, or raises ``errors.BadRequest`` with the words every route says for that
shape. An empty value is an absent one (as an HTML form sends it). A route checks what
spans parameters (a search needs words or a signal) after ``parse``.
"""

from __future__ import annotations

import re
from datetime import date as _date

from relore.contract import patterns, verbs
from relore.contract.verbs.common import FORMAT
from relore.serve.errors import BadRequest

REPO_SHAPE = "repo must be owner/name"
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


def repos(params, name: str, most: int) -> list[str]:
    """Repositories named (``repo=o/n``, repeatable): each ``owner/name``, at most ``most``,
    each once (GitHub compares names case-insensitively), in the order given."""
    values = [v.strip() for v in _values(params, name) if v and v.strip()]
    for value in values:
        if not patterns.is_repo(value):
            raise BadRequest(REPO_SHAPE)
    if len(values) > most:
        raise BadRequest(f"at most {most} repositories per request (--org names every one)")
    return list({v.lower(): v for v in reversed(values)}.values())[::-1]


def owner(params, name: str) -> str | None:
    """A repository's owner (a user or an organisation), as ``owner/name`` spells it."""
    value = (_value(params, name) or "").strip()
    if not value:
        return None
    if not patterns.is_owner(value):
        raise BadRequest(f"{name} must be a GitHub user or organisation (the owner in owner/name)")
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


def number(params) -> int:
    """A thread number (an issue's or a pull request's)."""
    raw = _value(params, "number")
    try:
        return int(raw or "")
    except ValueError:
        raise BadRequest("number must be a thread number") from None


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


def many(params, name: str, max_values: int | None, max_chars: int | None) -> tuple[str, ...]:
    """A repeated parameter: its non-blank values, trimmed, each once, in order."""
    cleaned = tuple(dict.fromkeys(v.strip() for v in _values(params, name) if v and v.strip()))
    if max_values is not None and len(cleaned) > max_values:
        raise BadRequest(f"at most {max_values} --{name} values")
    for value in cleaned:
        if (max_chars is not None and len(value) > max_chars) or "\x00" in value:
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


def rule_ids(params, name: str, max_values: int) -> list[str]:
    values = _values(params, name)
    if len(values) > max_values or not all(patterns.RULE_ID_RE.fullmatch(v) for v in values):
        raise BadRequest(f"{name} takes at most {max_values} rule ids")
    return values


def output_format(params) -> str:
    """``format=json`` (the default) or ``format=text``: the text ``relore`` prints."""
    return one(FORMAT, params)


def path(params, name: str, max_chars: int, *, required: bool = True) -> str | None:
    """A path relative to the repository root, normalised (``./`` and ``//`` dropped); never
    absolute, never through ``..``, no NUL or control character."""
    raw = params.get(name) or ""
    if not raw.strip():
        if required:
            raise BadRequest(f"{name} is required: a path relative to the repository root")
        return None
    if "\x00" in raw or _CONTROL.search(raw):
        raise BadRequest(f"{name} contains a NUL or control character")
    if len(raw) > max_chars:
        raise BadRequest(f"{name} is at most {max_chars} characters")
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


def identifier(params, name: str, *, dotted: bool = False) -> str:
    """An identifier (``Foo``), or with ``dotted`` a dotted one (``a.b.C``)."""
    value = (params.get(name) or "").strip()
    if "\x00" in value:
        raise BadRequest(f"{name} contains a NUL character")
    pattern = patterns.DOTTED_NAME_RE if dotted else patterns.IDENTIFIER_RE
    if len(value) > patterns.MAX_NAME_CHARS or not pattern.fullmatch(value):
        shape = "an identifier, or a dotted one (a.b.C)" if dotted else "an identifier"
        raise BadRequest(f"{name} must be {shape}, got {value[:80]!r}")
    return value


def query(params, name: str, most: int, pasted: int) -> str | None:
    """Search text: at most ``most`` characters, or ``pasted`` when it is a pasted traceback
    (the contract's test), which the route cuts to ``most`` by the one cutting rule."""
    raw = params.get(name) or ""
    is_pasted = len(raw) > most and patterns.is_pasted_traceback(raw[: pasted + 1])
    what = "the pasted traceback" if is_pasted else "the query"
    return text(params, name, pasted if is_pasted else most, what=what)


def pattern(params, name: str, most: int) -> str:
    """grep's regular expression: required, one line, at most ``most`` characters."""
    value = params.get(name) or ""
    if not value:
        raise BadRequest(f"{name} is required")
    if "\x00" in value or "\n" in value:
        raise BadRequest(f"the {name} contains a NUL or a line break")
    if len(value) > most:
        raise BadRequest(f"the {name} is at most {most} characters")
    return value


def files(params, name: str, most: int) -> list[str]:
    """rules' paths: at least one non-blank, at most ``most``."""
    values = [f for f in _values(params, name) if f.strip()]
    if not values:
        raise BadRequest(f"name at least one file ({name}=path), relative to the repository root")
    if len(values) > most:
        raise BadRequest(f"at most {most} files per request")
    return values


def _label(p) -> str | None:
    return f"the {p.what}" if p.what else None


# kind -> its parser, given the declared parameter (contract/verbs/shape.py lists the kinds)
KINDS = {
    "string": lambda q, p: _value(q, p.name),
    "text": lambda q, p: text(q, p.name, p.most, what=_label(p)),
    "query": lambda q, p: query(q, p.name, p.most, p.pasted),
    "pattern": lambda q, p: pattern(q, p.name, p.most),
    "repo": lambda q, p: repo(q, required=p.required_on("http")),
    "repos": lambda q, p: repos(q, p.name, p.values),
    "owner": lambda q, p: owner(q, p.name),
    "date": lambda q, p: date(q, p.name),
    "path": lambda q, p: path(q, p.name, p.most, required=p.required_on("http")),
    "identifier": lambda q, p: identifier(q, p.name),
    "dotted": lambda q, p: identifier(q, p.name, dotted=True),
    "session": lambda q, p: session(q),
    "number": lambda q, p: number(q),
    "int": lambda q, p: whole(
        q, p.name, low=p.low, high=p.high, default=p.default, required=p.required_on("http")
    ),
    "limit": lambda q, p: whole(q, p.name, low=p.low, high=p.high, default=p.high),
    "choice": lambda q, p: choice(q, p.name, p.choices, p.default),
    "flag": lambda q, p: flag(q, p.name),
    "many": lambda q, p: many(q, p.name, p.values, p.most),
    "files": lambda q, p: files(q, p.name, p.values),
    "rule_ids": lambda q, p: rule_ids(q, p.name, p.values),
}


def one(param, params):
    """One declared parameter, read by its kind's parser."""
    return KINDS[param.kind](params, param)


def parse(verb: str, params) -> dict:
    """Every parameter ``verb`` declares over HTTP, by name, each checked by its kind's
    parser in the declaration's order (the first refused is the 400)."""
    return {p.name: one(p, params) for p in verbs.VERBS[verb].on("http")}
