"""A caller's ``owner/name``, resolved once per request to the ``repo_id`` every mart is keyed
by; every query after that compares ``repo_id`` (an index key, and the key rows are
distributed on), never a name.

This is where a caller's repository name is compared, case-insensitively as GitHub compares
them, with the current name first and then a former one GitHub redirects (a rename or a
transfer). ``marts.repositories`` is the house's list of repositories, one row each: a
lookup, where the ``repo_status`` view counts every mart (seconds at a million documents).
Only rules of a repository never extracted and the clone's directory still go by name
(docs/internals/serve.md).
"""

from __future__ import annotations

from psycopg import AsyncConnection
from psycopg.rows import tuple_row

from relore.serve.errors import NotIndexed

# The repository whose current name it is, else one it redirects from. A name two repository
# ids have held (one renamed away, another created under it): the newest id, the repository
# that holds the name now.
FIND = """
select repo_id from marts.repositories
where lower(repo) = lower(%(repo)s) or lower(%(repo)s) = any(former_names)
order by lower(repo) = lower(%(repo)s) desc, repo_id desc
limit 1
"""

# Every repository with something to search.
EVERY = "select repo_id, repo from marts.repositories where documents > 0 order by repo"
# ... of one owner (its current name's)
EVERY_OF = """
select repo_id, repo from marts.repositories
where documents > 0 and lower(split_part(repo, '/', 1)) = lower(%(owner)s)
order by repo
"""


def targets(conn, name: str | None) -> list[tuple[int, str]] | None:
    """For an operator job (a sync connection): ``[(repo_id, name)]`` of the named
    repository (None when the index holds nothing for it), else of every one held."""
    if name is None:
        return [tuple(row) for row in conn.execute(EVERY).fetchall()]
    row = conn.execute(FIND, {"repo": name}).fetchone()
    return None if row is None else [(row[0], name)]


async def find(conn: AsyncConnection, name: str) -> int | None:
    """The repository's id, or None when the index holds nothing for it."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(FIND, {"repo": name})
        row = await cur.fetchone()
    return None if row is None else row[0]


async def require(conn: AsyncConnection, name: str) -> int:
    """The repository's id; a repository we hold nothing for is not an empty answer: a 404
    that says so, what we hold, and how to index it."""
    repo_id = await find(conn, name)
    if repo_id is not None:
        return repo_id
    held = await _held(conn)
    raise NotIndexed(
        f"{name} is not indexed here"
        + (f" (indexed: {', '.join(held)})" if held else " (nothing is indexed yet)")
        + f"; index it with `relored extract --repo {name}` then `dbt build`",
        indexed=held,
    )


async def _held(conn: AsyncConnection) -> list[str]:
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute("select repo from marts.repositories order by repo")
        return [row[0] for row in await cur.fetchall()]


async def scope(
    conn: AsyncConnection, names: tuple[str, ...], owner: str | None
) -> tuple[tuple[int, str], ...]:
    """``(repo_id, name)`` of each repository a search across repositories ranks: those
    named (each must be held: ``require``), every one of ``owner``, and with neither every
    one held. An owner none of whose repositories is held is a 404 like a repository's."""
    found: dict[int, str] = {}
    for name in names:
        found.setdefault(await require(conn, name), name)
    if owner or not names:
        async with conn.cursor(row_factory=tuple_row) as cur:
            await cur.execute(EVERY_OF, {"owner": owner}) if owner else await cur.execute(EVERY)
            rows = await cur.fetchall()
        if owner and not rows:
            held = await _held(conn)
            raise NotIndexed(
                f"no repository of {owner} is indexed here"
                + (f" (indexed: {', '.join(held)})" if held else " (nothing is indexed yet)"),
                indexed=held,
            )
        for repo_id, name in rows:
            found.setdefault(repo_id, name)
    return tuple(found.items())
