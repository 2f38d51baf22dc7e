"""Scoring at thread level, the same for every system.

A system answers with documents (or pull requests) in rank order. Each answer is cut to the
page an agent reads — at most 10 hits, at most 3 from one thread, the shape relore's search
returns — then reduced to the threads it names, in order of first appearance. Recall@10 is
the share of an item's target threads on that page; the reciprocal rank is 1/position of the
first target thread in that thread list (0 when none is there). Both average over items.

Slots are scored too, for a system that shows text with its hits (relore): a hit is
*wasted* when the text it shows as its own evidence — its snippet, and for an opening post
the title it carries — holds none of the query's content words (the query's lexemes, stop
words dropped, by Postgres' own english configuration). The wasted share is over every hit
returned in a slice, and hits per page is the mean page length.
"""

from __future__ import annotations

from collections.abc import Iterable

PAGE_HITS = 10
PER_THREAD = 3

Thread = tuple[str, int]


def thread_key(repo: str, number: int) -> Thread:
    return (repo.lower(), int(number))


def page(ranked: Iterable[Thread], hits: int = PAGE_HITS, per_thread: int = PER_THREAD) -> list:
    """The first ``hits`` answers, skipping any beyond ``per_thread`` from one thread
    (skipped, not truncated: the page fills from further down, like a window function)."""
    taken: list[Thread] = []
    seen: dict[Thread, int] = {}
    for key in ranked:
        if seen.get(key, 0) >= per_thread:
            continue
        seen[key] = seen.get(key, 0) + 1
        taken.append(key)
        if len(taken) == hits:
            break
    return taken


def threads_in_order(hits: Iterable[Thread]) -> list[Thread]:
    """Each thread once, where it first appears."""
    return list(dict.fromkeys(hits))


def recall(threads: list[Thread], targets: Iterable[Thread]) -> float:
    wanted = set(targets)
    if not wanted:
        raise ValueError("an item without targets cannot be scored")
    return len(wanted.intersection(threads)) / len(wanted)


def first_rank(threads: list[Thread], targets: Iterable[Thread]) -> int | None:
    """1-based position of the first target thread, or None."""
    wanted = set(targets)
    for position, key in enumerate(threads, 1):
        if key in wanted:
            return position
    return None


def reciprocal_rank(threads: list[Thread], targets: Iterable[Thread]) -> float:
    rank = first_rank(threads, targets)
    return 0.0 if rank is None else 1.0 / rank


def score(ranked_hits: Iterable[Thread], targets: Iterable[Thread]) -> dict:
    """One item: the page's threads, the first target's rank, Recall@10 and reciprocal rank."""
    targets = list(targets)
    threads = threads_in_order(page(ranked_hits))
    return {
        "threads": threads,
        "rank": first_rank(threads, targets),
        "recall": recall(threads, targets),
        "recall_at_5": recall(threads[:5], targets),
        "rr": reciprocal_rank(threads, targets),
    }


def wasted(shown: Iterable[set[str]], query: set[str]) -> list[bool]:
    """Per hit (each given as the lexemes of the text it shows): True when that text holds
    none of the query's lexemes. A query without content words wastes nothing."""
    if not query:
        return [False for _ in shown]
    return [not (lexemes & query) for lexemes in shown]


def summary(scores: list[dict]) -> dict:
    """n, mean Recall@10 and MRR over items; with slots scored, the wasted share of all hits
    returned and the mean hits per page."""
    n = len(scores)
    if n == 0:
        return {"n": 0, "recall_at_10": None, "recall_at_5": None, "mrr": None}
    figures = {
        "n": n,
        "recall_at_10": sum(s["recall"] for s in scores) / n,
        "recall_at_5": sum(s.get("recall_at_5", s["recall"]) for s in scores) / n,
        "mrr": sum(s["rr"] for s in scores) / n,
    }
    slotted = [s for s in scores if "wasted" in s]
    if slotted:
        hits = sum(len(s["wasted"]) for s in slotted)
        figures["wasted_share"] = sum(sum(s["wasted"]) for s in slotted) / hits if hits else 0.0
        figures["hits_per_page"] = hits / len(slotted)
    return figures
