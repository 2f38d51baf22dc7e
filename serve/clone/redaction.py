"""What the daemon's working clone prints, redacted by the marts' one secret catalog.

``grep``, ``symbol``, ``copies`` and ``why`` print lines, paths and commit subjects read from
the clone at request time: relore never stored them, so the build's redaction never saw
them. Each page's strings go to ``marts.relore_redact`` (the catalog in
macros/relore_secret_catalog.sql, the function every mart string passed) in one round trip,
as the reader, before they are cut and quoted: a secret cut in half at ``LINE_CHARS`` would
keep its first half. The function is immutable and writes nothing, so a hot standby runs it
too. Without the database a page is a 503 (the pool's), never an unredacted line.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg_pool import AsyncConnectionPool

# a line is redacted on its first READ_CHARS characters (what any page shows of it, cut at
# 200, and a secret that starts there and runs on); the rest is never shown
READ_CHARS = 4_000

_REDACT = """
select coalesce(array_agg(marts.relore_redact(given.text) order by given.n), '{}')
from unnest(%(texts)s::text[]) with ordinality as given (text, n)
"""


def _sendable(text: str | None) -> str | None:
    """Postgres text holds no NUL and no lone surrogate."""
    if text is None:
        return None
    text = text[:READ_CHARS].replace("\x00", "\ufffd")
    return text.encode("utf-8", "replace").decode("utf-8")


async def redact(pool: AsyncConnectionPool | None, texts: Sequence[str | None]) -> list[str | None]:
    """``texts`` redacted, in order (None stays None), in one query. ``pool`` None is a
    caller with no database (the lens's own tests of parsing): the texts come back as they
    are. Every route passes the daemon's pool (serve/clone/routes.py)."""
    if pool is None:
        return list(texts)
    sendable = [_sendable(text) for text in texts]
    if not any(sendable):
        return sendable
    async with pool.connection() as conn:
        cursor = await conn.execute(_REDACT, {"texts": sendable})
        (redacted,) = await cursor.fetchone()
    return list(redacted)


async def records(
    pool: AsyncConnectionPool | None, found: Sequence[tuple[str, int, str]]
) -> list[tuple[str, int, str]]:
    """``git grep`` records (path, line, text) with their paths and texts redacted."""
    flat = await redact(pool, [value for path, _, text in found for value in (path, text)])
    return [(flat[2 * i], number, flat[2 * i + 1]) for i, (_, number, _) in enumerate(found)]


async def fields(
    pool: AsyncConnectionPool | None, rows: Sequence[dict], names: Sequence[str]
) -> None:
    """Each row's string fields ``names`` redacted in place."""
    await places(pool, [(row, name) for row in rows for name in names])


def _holds_text(container, key) -> bool:
    try:
        return isinstance(container[key], str)
    except (KeyError, IndexError):
        return False


async def places(pool: AsyncConnectionPool | None, slots: Sequence[tuple]) -> None:
    """Each (container, key) slot holding a string, redacted in place, in one query."""
    held = [(container, key) for container, key in slots if _holds_text(container, key)]
    values = await redact(pool, [container[key] for container, key in held])
    for (container, key), value in zip(held, values, strict=True):
        container[key] = value
