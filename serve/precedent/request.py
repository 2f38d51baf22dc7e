"""A precedent request as the caller names it: a description of the change, the files it
will touch (evidence, never a filter), the repository and how many pull requests."""

from __future__ import annotations

from dataclasses import dataclass

from relore.contract.limits import MAX_PRECEDENT, MAX_QUERY_CHARS, MAX_SIGNAL_VALUES
from relore.serve import inputs
from relore.serve.errors import BadRequest
from relore.serve.terms import MAX_TERMS
from relore.serve.terms import TERM_RE as _TERM_RE

# what a precedent may be drawn from: a maintainer's or a contributor's words, never a bot's
TIERS = ("authoritative", "reported")


@dataclass(frozen=True)
class PrecedentRequest:
    text: str
    repo: str
    limit: int = MAX_PRECEDENT
    files: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()


def parse_request(params) -> PrecedentRequest:
    """``q`` (the change, in words), ``repo`` (required: meaning is searched within one),
    ``file`` (repeatable), ``limit`` (1 to MAX_PRECEDENT)."""
    text = inputs.text(params, "q", MAX_QUERY_CHARS, what="the description") or ""
    repo = inputs.repo(params)
    files = inputs.many(params, "file", MAX_SIGNAL_VALUES, MAX_QUERY_CHARS)
    terms = tuple(dict.fromkeys(t.lower() for t in _TERM_RE.findall(text)))[:MAX_TERMS]
    if not terms and not files:
        raise BadRequest("describe the change in words (and name the files with --file)")
    limit = inputs.limit(params, MAX_PRECEDENT)
    return PrecedentRequest(text=text, repo=repo, limit=limit, files=files, terms=terms)
