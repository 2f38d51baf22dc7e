"""``/readyz``: whether this daemon should be sent requests now.

``/healthz`` says the process answers and its database takes a query (a liveness probe: a
daemon whose index is still building is alive). Readiness asks more: the marts can be read
(a standby that has not replayed the first build has none) and every repository's search
index has been built in this daemon's index directory. A new pod's index starts empty, so
it takes no traffic until it has one; a load balancer sends its searches to the pods that
do, instead of making an agent wait out a build.

Each check also starts the work it finds missing: one task per daemon builds (or
refreshes, when a build wrote since) the indexes that need it, one repository at a time,
so a daemon behind a probe stays current with the marts before the first search asks. A
refresh does not make a daemon unready (the index it has still answers); only an index
never built does.

The page names no repository: the probe needs no token, so it says counts and reasons.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from relore.serve import errors, repos, status
from relore.serve.lexical import store

log = logging.getLogger("relore.serve")


class Warming:
    """The one task that builds and refreshes this daemon's indexes, and its last failure."""

    def __init__(self) -> None:
        self.task: asyncio.Task | None = None
        self.failure: str | None = None

    def start(self, indexes: store.Indexes, repo_ids: list[int]):
        if self.task is not None and not self.task.done():
            return  # the running one reads every repository's state again next probe
        self.task = asyncio.create_task(self._run(indexes, repo_ids))

    async def _run(self, indexes: store.Indexes, repo_ids: list[int]) -> None:
        # every repository at once: the shared index's members in one commit, not one each
        try:
            await indexes.refresh_each(repo_ids, indexes.root)
        except errors.Unavailable as exc:  # an unwritable index directory: said as is
            self.failure = exc.message
            log.warning("indexes not built: %s", exc.message)
            return
        except Exception as exc:  # a probe reports, it never crashes
            self.failure = f"the search index could not be built ({type(exc).__name__})"
            log.exception("indexes not built")
            return
        self.failure = None


async def check(pool: AsyncConnectionPool, warming: Warming) -> dict:
    """The readiness page; raises :class:`errors.Unavailable` while not ready (a psycopg
    error, the marts unreadable, is the caller's to map like any route's)."""
    async with pool.connection() as conn:
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(repos.EVERY)
            held = [row["repo_id"] for row in await cur.fetchall()]
            where = await status.replica(cur)
        indexes = store.for_connection(conn)
        states = {repo_id: (await indexes.state(conn, repo_id))["state"] for repo_id in held}
    stale = [repo_id for repo_id, state in states.items() if state != "current"]
    if stale:
        warming.start(indexes, stale)
    counts = Counter(states.values())
    missing = counts["not built"]
    if missing:
        why = f" (last attempt: {warming.failure})" if warming.failure else ""
        raise errors.Unavailable(
            f"building the search index: {missing} of {len(held)} repositories not built yet{why}",
            retry_after=5,
        )
    return {
        "ready": True,
        "repositories": len(held),
        "indexes": {"current": counts["current"], "refreshing": counts["behind"]},
        "replica": where,
    }
