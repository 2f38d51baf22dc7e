"""The one renderer: dicts from the daemon in, text out. Stdlib only.

Retrieved prose is somebody else's words: every line of it is prefixed with ``>`` so an
unmarked line is always ours (counts, trust tiers, dates, URLs). A single-line retrieved
value on one of our lines (a title, a login, a path) sits inside ``⟦ ⟧``. The daemon has
sanitised every string already (``relore.contract.sanitize``), and the local code lens's
pages pass the same envelope (``cli.py``); no module here splits, cleans or flattens
text by a rule of its own: a quoted field is read back with ``sanitize.quoted_lines`` and a
fenced value flattened with ``sanitize.flat`` — so a page prints the same whether or not it
passed the scrub.

One module a resource: ``search``, ``precedent``, ``thread``, ``inflight``, ``status``,
``rules``, ``lens`` (map/defs/refs over the caller's tree), ``clone`` (why/symbol/grep/copies
from the daemon's clone); ``marks`` holds what they share. Callers import this package
(``from relore.contract import render``) and call ``render.<verb>_page``.
"""

from __future__ import annotations

from relore.contract.render.clone import copies_page, grep_page, symbol_page, why_page
from relore.contract.render.inflight import INFLIGHT_CLAIMS, inflight_page
from relore.contract.render.lens import defs_page, map_page, refs_page
from relore.contract.render.marks import enveloped
from relore.contract.render.precedent import precedent_page
from relore.contract.render.rules import rules_page
from relore.contract.render.search import search_page
from relore.contract.render.status import status_page
from relore.contract.render.thread import thread_page

__all__ = [
    "INFLIGHT_CLAIMS",
    "copies_page",
    "defs_page",
    "enveloped",
    "grep_page",
    "inflight_page",
    "map_page",
    "precedent_page",
    "refs_page",
    "rules_page",
    "search_page",
    "status_page",
    "symbol_page",
    "thread_page",
    "why_page",
]
