"""Search results already ranked, kept for the next identical request.

A key is everything that decides a result: the request as parsed, the repository, and the
state of what it was read from (the database's identity and the mark of every mart the index
follows, ``source.FOLLOWED``). A build that writes anything moves a mark, so a result read
before it is never served after it: a deleted or re-redacted comment, a tier that moved, a
thread closed all change the key. The cache holds ``entries`` results per process (least
recently used out first); ``RELORE_SEARCH_CACHE=0`` turns it off.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Hashable

DEFAULT_ENTRIES = 1024
MAX_ENTRIES = 1_000_000


def entries_from_env(env=None) -> int:
    env = os.environ if env is None else env
    raw = env.get("RELORE_SEARCH_CACHE", "")
    if raw.strip() == "":
        return DEFAULT_ENTRIES
    try:
        entries = int(raw)
    except ValueError:
        entries = -1
    if not 0 <= entries <= MAX_ENTRIES:
        raise ValueError(
            f"RELORE_SEARCH_CACHE must be a whole number of results from 0 (off) to "
            f"{MAX_ENTRIES}, not {raw!r}"
        )
    return entries


class Results:
    """A least-recently-used map, used from one event loop (no lock needed)."""

    def __init__(self, entries: int):
        self.entries = entries
        self._kept: OrderedDict[Hashable, object] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable):
        if not self.entries:
            return None
        found = self._kept.get(key)
        if found is None:
            self.misses += 1
            return None
        self._kept.move_to_end(key)
        self.hits += 1
        return found

    def put(self, key: Hashable, value) -> None:
        if not self.entries:
            return
        self._kept[key] = value
        self._kept.move_to_end(key)
        while len(self._kept) > self.entries:
            self._kept.popitem(last=False)
