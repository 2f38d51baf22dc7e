"""What a page must say besides its counts and its items, stated once, as data.

Every search, thread and inflight page carries ``notices``: a list, in reading order, of
``{"kind": K, "place": P, "text": sentence}`` (plus the facts the sentence was made from).
``kind`` is one of :data:`KINDS`; ``place`` is where a renderer shows it:

- ``title``: in parentheses after the thread's own line (inflight: the thread is not indexed);
- ``count``: in parentheses after the line that states the page's count;
- ``before``: a line of its own before the items;
- ``after``: a line of its own after them.

The sentence is written here and nowhere else: ``contract/render/`` (the text ``relore``
prints, and ``format=text``) and ``serve/static/app.js`` (the page at ``/``) print ``text``
verbatim at ``place`` and word nothing of their own, so the CLI and the page can never
disagree about what a page left out, widened, lowered or cut. A new thing to say is a
new kind here, in the OpenAPI document (it reads :data:`KINDS`) and in the Node test's pages.

Built from the page's own facts (the fields stay on the page for scripts) by
:func:`stated`, which wraps the three functions that build those pages.
"""

from __future__ import annotations

import functools

from relore.contract import sanitize

PLACES = ("title", "count", "before", "after")

# kind -> what it says (the OpenAPI document shows these)
KINDS = {
    # search
    "per_thread_cap": "a thread had more matching documents than the page takes from one (N)",
    "query_cut": "a pasted traceback longer than a query was cut to its lead, its error line "
    "and the deepest frames above it before it was searched",
    "expanded": "a pasted traceback or error line was searched in parts (its error line, test "
    "ids and file paths as filters; its words as text), then the parts' hits merged",
    "normalized_filters": "the filters as the index compared them",
    "widened": "too few documents carry every term: the page is filled with documents "
    "carrying some of them, ranked by BM25, each hit saying how many it carries",
    "trust_lowered": "nothing at the question's trust floor answered: a lower tier is shown",
    "no_matches": "nothing matched (with the filters that zeroed the page)",
    "repositories": "a search across repositories: how many were ranked together (one idf "
    "across them), which the hits came from, and which the hourly loop left behind",
    "semantic": "which tiers answered: hits found by meaning alone, or why a question was "
    "answered by its words only",
    # thread
    "focus": "how many comments carry a focus word",
    "focus_widened": "no comment carried a focus word: the outline is shown whole",
    "capped": "the outline stopped at its row cap",
    "files_truncated": "GitHub lists at most 3,000 changed files: a path may be missing",
    "not_found": "the comment asked for is not in this thread",
    "more": "more comments follow: how to read on",
    "skipped": "the first page shows the ends and the middle: how many comments it left out "
    "and how to read them in order",
    # inflight
    "not_indexed": "the issue itself is not indexed (claims to close it are)",
    "no_pulls": "no pull request claims to close it",
    "pulls_capped": "more pull requests claim it than the list shows: the total says how many",
    # every page a daemon on a hot standby serves
    "standby_behind": "the daemon reads a hot standby that is behind its primary or not "
    "streaming from it: what changed since is not on the page",
}

# Said only by a daemon reading a standby that is behind: the recorded pages (a primary)
# cannot show it; tests/integration/test_hot_standby.py asserts it on a real standby.
STANDBY_ONLY = frozenset({"standby_behind"})


def _notice(kind: str, place: str, text: str, **facts) -> dict:
    assert kind in KINDS and place in PLACES, (kind, place)
    return {"kind": kind, "place": place, "text": text, **facts}


def _value(value) -> str:
    """A filter value as the text renderer has always shown it (flattened first: a value
    breaks no line of ours before or after the envelope's scrub)."""
    if isinstance(value, list | tuple):
        return str([sanitize.flat(str(v)) for v in value])
    return sanitize.flat(str(value))


def filters_text(filters: dict) -> str:
    """``k=v, …``: the request's filters, as the search page's head and ``no_matches`` say them."""
    return ", ".join(f"{k}={_value(v)}" for k, v in filters.items())


# a traceback's parts (serve/search._legs), as the expanded notice names them
_PARTS = {
    "error": "its error line as a filter",
    "test": "its test ids as a filter",
    "file": "its file paths as a filter",
    "text": "its words",
}


def search(page: dict) -> list[dict]:
    notices = []
    across = page.get("repositories")
    if across:
        answered = ", ".join(f"{name} ({n})" for name, n in across["answered"].items())
        behind = ", ".join(f"{b['repo']} ({b['why']})" for b in across.get("behind", []))
        text = (
            f"ranked together across {across['searched']} repositories (one idf across them)"
            + (f"; hits from {answered}" if answered else "")
            + (f"; behind in the hourly loop, its newest threads may be missing: {behind}"
               if behind else "")
        )  # fmt: skip
        notices.append(_notice("repositories", "before", text, searched=across["searched"]))
    if page.get("per_thread_capped"):
        cap = page["per_thread_cap"]
        text = f"matching documents, at most {cap} per thread"
        notices.append(_notice("per_thread_cap", "count", text, per_thread_cap=cap))
    if page.get("pasted_chars"):
        n, kept = page["pasted_chars"], len(page.get("query") or "")
        text = (
            f"cut: the pasted traceback ({n:,} characters) was searched as its lead, its error "
            f"line and the deepest frames above it ({kept:,} characters)"
        )
        notices.append(_notice("query_cut", "before", text, pasted_chars=n))
    if page.get("expanded"):
        what = "traceback" if "\n" in (page.get("query") or "").strip() else "error line"
        parts = ", ".join(
            f"{_PARTS.get(leg['leg'], leg['leg'])} ({leg['returned']} hits)"
            for leg in page.get("legs", [])
        )
        text = (
            f"searched the pasted {what} in parts and merged their hits (those found by "
            f"more parts first): {parts}"
        )
        notices.append(_notice("expanded", "before", text))
    if page.get("normalized_filters"):
        shown = "; ".join(
            f"{k}: {', '.join(v) if v else '(nothing: no value normalizes)'}"
            for k, v in page["normalized_filters"].items()
        )
        text = f"filters as the index holds them: {shown}"
        notices.append(_notice("normalized_filters", "before", text))
    if page.get("widened"):
        fill = page.get("fill")
        if fill:
            text = (
                f"widened: {fill['every_word']} hit(s) carry every term; "
                f"{fill['some_words']} more carry at least {fill['minimum']} of the "
                f"{fill['of']} terms (each hit says how many)"
            )
        else:
            text = "widened: some hits carry only some of their part's words (each hit says)"
        notices.append(_notice("widened", "before", text))
    if page.get("trust_lowered"):
        lowered = page["trust_lowered"]
        text = (
            f"trust floor lowered: nothing {'/'.join(lowered['from'])} answered; showing "
            f"{'/'.join(lowered['to'])} (each hit names its tier)"
        )
        notices.append(_notice("trust_lowered", "before", text))
    semantic = (page.get("tiers") or {}).get("semantic") or {}
    if semantic.get("state") == "answered" and semantic.get("hits_by_meaning_only"):
        n = semantic["hits_by_meaning_only"]
        text = f"by words and meaning: {n} hit(s) found by meaning alone (each says how near)"
        notices.append(_notice("semantic", "before", text, **semantic))
    elif semantic.get("state") == "off" and semantic.get("route") == "fused":
        text = f"by words only; the semantic tier is off: {semantic['reason']}"
        notices.append(_notice("semantic", "before", text, **semantic))
    if not page["hits"]:
        filters = filters_text(page.get("filters", {}))
        text = "no matches" + (f" with filters {filters}" if filters else "")
        notices.append(_notice("no_matches", "before", text))
    return notices


def precedent(page: dict) -> list[dict]:
    """A precedent page says which tiers answered and when nothing did (search's kinds)."""
    notices = []
    meaning = (page.get("tiers") or {}).get("meaning") or {}
    if meaning.get("state") == "off":
        text = f"by words and files only; the semantic tier is off: {meaning['reason']}"
        notices.append(_notice("semantic", "before", text, **meaning))
    if not page["hits"]:
        notices.append(_notice("no_matches", "before", "no closed pull request matches"))
    return notices


def thread(page: dict) -> list[dict]:
    notices = []
    mode = page["mode"]
    matched = page.get("focus_matched")
    if mode == "outline" and matched is not None:
        if page.get("focus_widened"):
            text = f"{matched} match the focus, none did: showing all"
            notices.append(_notice("focus_widened", "count", text))
        else:
            notices.append(_notice("focus", "count", f"{matched} match the focus"))
    if mode == "page" and matched is not None:
        text = f"{matched} of {page['total']} carry a focus word"
        notices.append(_notice("focus", "before", text))
    if mode == "outline" and page.get("capped"):
        text = f"CAPPED: {page['capped']}; read on with --after, or narrow with --focus"
        notices.append(_notice("capped", "after", text))
    if page.get("missing"):
        kind = "files_truncated" if mode == "files" else "not_found"
        notices.append(_notice(kind, "after", page["missing"]))
    if mode == "page" and page.get("left_out"):
        n, after = page["left_out"]["comments"], page["left_out"]["after"]
        text = (
            f"{n} comments between those shown are left out: read them in order with --after "
            f"{after}, or --outline for every comment"
        )
        notices.append(_notice("skipped", "after", text, left_out=n, after=after))
    if mode not in ("outline", "files", "full") and page.get("next_after"):
        text = f"more: --after {page['next_after']}, or --outline for every comment"
        notices.append(_notice("more", "after", text, after=page["next_after"]))
    return notices


def inflight(page: dict) -> list[dict]:
    notices = []
    if page["thread"].get("indexed") is False:
        notices.append(_notice("not_indexed", "title", "not indexed; claims to close it are"))
    if not page["pulls"]:
        notices.append(_notice("no_pulls", "after", "no pull request claims to close it"))
    elif page["total"] > page["returned"]:
        text = f"CAPPED: {page['returned']} of {page['total']} shown (open, merged, then abandoned)"
        notices.append(_notice("pulls_capped", "count", text))
    return notices


def stated(build):
    """Put ``build(page)`` on the page a wrapped coroutine returns (``None`` stays ``None``)."""

    def decorate(func):
        @functools.wraps(func)
        async def wrapper(*args, **kwargs):
            page = await func(*args, **kwargs)
            if page is not None:
                page["notices"] = build(page)
            return page

        return wrapper

    return decorate


def standby_behind(where: dict) -> list[dict]:
    """The notice that leads a search, thread or inflight page read from a standby behind
    its primary (``where``: serve/status.py's ``replica``); none on a primary or a standby
    that keeps up."""
    if not where.get("standby") or not where.get("behind"):
        return []
    lag, last = where.get("replay_lag_s"), where.get("last_replayed_at") or "never"
    if not where.get("receiving"):
        said = f"not streaming from its primary (last replayed {last})"
    elif lag is None:
        said = "streaming, nothing replayed yet"
    else:
        said = f"{lag:g} s behind its primary (last replayed {last})"
    text = f"BEHIND: read from a hot standby {said}; later changes are not on this page"
    return [_notice("standby_behind", "before", text, replay_lag_s=lag)]
