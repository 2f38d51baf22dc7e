"""A precedent request as the caller names it: a description of the change, the files it
will touch (evidence, never a filter), the repository and how many pull requests."""

from __future__ import annotations

from dataclasses import dataclass

from relore.contract.limits import MAX_PRECEDENT
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
    got = inputs.parse("precedent", params)  # as contract/verbs declares it
    text, files = got["q"] or "", got["file"]
    terms = tuple(dict.fromkeys(t.lower() for t in _TERM_RE.findall(text)))[:MAX_TERMS]
    if not terms and not files:
        raise BadRequest("describe the change in words (and name the files with --file)")
    return PrecedentRequest(
        text=text, repo=got["repo"], limit=got["limit"], files=files, terms=terms
    )
