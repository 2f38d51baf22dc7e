"""Making a payload storable as JSONB without losing it.

JSONB refuses ``\\u0000`` and text that is not valid Unicode (a lone surrogate such as
``\\ud800``), both of which GitHub will happily send inside a comment. Such a payload is
landed with those characters replaced by U+FFFD, and its exact text is kept in
``ops.quarantine`` with the reason, so the thread stays whole and nothing is lost.
"""

from __future__ import annotations

import json
import re

_BAD_CHARS = re.compile("[\\x00\\ud800-\\udfff]")
REPLACEMENT = "\ufffd"


def _scrub(value, problems: set[str]):
    if isinstance(value, str):
        if _BAD_CHARS.search(value):
            if "\x00" in value:
                problems.add("NUL character")
            if re.search("[\\ud800-\\udfff]", value):
                problems.add("lone surrogate")
            return _BAD_CHARS.sub(REPLACEMENT, value)
        return value
    if isinstance(value, dict):
        return {_scrub(k, problems): _scrub(v, problems) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, problems) for v in value]
    return value


def storable(payload: dict) -> tuple[dict, list[str]]:
    """The payload as JSONB will take it, and what had to change (empty: nothing)."""
    problems: set[str] = set()
    clean = _scrub(payload, problems)
    return clean, sorted(problems)


def exact_text(payload: dict) -> str:
    """The payload's exact JSON text, ASCII-escaped so a text column can hold it."""
    return json.dumps(payload, ensure_ascii=True, sort_keys=True)
