"""The marks every page is made of: a quoted field (each line ``>``), a fenced value (``⟦ ⟧``),
the notices the daemon worded, the envelope around a page, plurals of our own words."""

from __future__ import annotations

from relore.contract import sanitize


def _marked(text: str | None, indent: str = "    ") -> list[str]:
    """A field the daemon quoted (every line already marked ``>``), indented."""
    return [indent + q for q in sanitize.quoted_lines(text)]


def _f(value) -> str:
    """A retrieved single-line value, fenced (``?`` when there is none). Flattened here too,
    so a page prints the same before and after the scrub."""
    return sanitize.fence(sanitize.flat(str(value))) if value not in (None, "") else "?"


def enveloped(page: dict, text: str, *, compact: bool = False) -> str:
    """The daemon's envelope around a rendered page: its delimiters always, its one-line
    notice unless ``compact``. The marks inside are what matter; the notice explains them."""
    envelope = page.get("envelope")
    if not envelope:
        return text
    head = [envelope["begin"]] + ([] if compact else [envelope["notice"]])
    return "\n".join([*head, text, envelope["end"]])


def _state(hit: dict) -> str:
    return f"{hit['kind']} {hit['state']}"


def _notices(page: dict, place: str) -> list[str]:
    """The sentences the daemon put on the page for ``place`` (``serve/notices.py`` words
    them; this renderer and the page at ``/`` print them verbatim, never a wording of
    their own)."""
    return [n["text"] for n in page.get("notices") or () if n.get("place") == place]


def _qualified(line: str, page: dict, place: str) -> str:
    """A line of ours with the notices that qualify it, each in parentheses."""
    return "".join([line, *(f" ({text})" for text in _notices(page, place))])


def _plural(n: int, word: str) -> str:
    """``1 file``, ``2 files``; a word ending in a consonant and y takes -ies."""
    if n == 1:
        return f"{n} {word}"
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return f"{n} {word[:-1]}ies"
    return f"{n} {word}s"
