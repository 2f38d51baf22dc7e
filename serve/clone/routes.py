"""Routes answered from the working clone: ``/why``, ``/code/symbol``, ``/code/grep``,
``/code/copies``.

Query parameters: every route takes ``repo`` (owner/name). ``why``: ``path`` (relative to
the repository root), ``line`` (1 or more). ``symbol``: ``name`` (an identifier), ``path``
(a directory or file to narrow to), ``limit``. ``grep``: ``pattern`` (an extended regular
expression, or a fixed string with ``fixed=1``), ``ignore_case``, ``path``, ``limit``.
``copies``: ``name`` (an identifier or dotted name), ``limit``.

Every line, path and subject read from the clone is redacted by the marts' catalog before
it is quoted (``relore.serve.clone.redaction``: one query per page, as the reader).

Bad input is a 400, something the clone does not hold a 404, a repository with no clone (or
a daemon that cannot run git or parse the tree) a 503 that says what to do: each a
``relore.serve.errors`` refusal, answered by the app's one handler. Never a 500. A client
that disconnects cancels its request: its git processes are killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from relore.contract import envelope
from relore.serve import responses
from relore.serve.clone import clones, copies, grep, symbol
from relore.serve.clone.git import GitFailed, GitTimeout
from relore.serve.clone.why import answer as why_mod
from relore.serve.errors import ClientGone, Unavailable

log = logging.getLogger("relore.serve.clone")


async def _disconnected(request: Request) -> None:
    """Returns when the client has gone (a GET has no body to read: the next message is
    the disconnect, whenever it comes)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def _unless_gone(request: Request, work):
    """``work``, cancelled (its git processes killed, its parse stopped) if the client
    disconnects first: an agent that gave up does not keep a git slot busy."""
    task = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if task.cancelled():
        raise ClientGone
    return task.result()


async def _answer(request: Request, parse, work, *, database: bool = False) -> Response:
    """``work`` over the clone once the request is parsed (a 400 reads nothing, the pool
    included): ``work(pool, parsed, clone)`` with ``database``, else ``work(parsed, clone,
    pool=pool)``. Either way what it prints of the clone passes the marts' secret catalog
    through the pool: there is no unredacted path."""
    parsed = parse(request.query_params)
    repo = parsed.repo if hasattr(parsed, "repo") else parsed["repo"]
    clone = clones.clone_for(repo)
    try:
        if database:
            page = await _unless_gone(request, work(request.app.state.pool, parsed, clone))
        else:
            pool = request.app.state.pool
            page = await _unless_gone(request, work(parsed, clone, pool=pool))
    except GitTimeout as exc:
        raise Unavailable(f"{exc} took longer than this daemon allows a request") from None
    except GitFailed as exc:
        log.warning("git failed on %s: %s", request.url.path, exc.stderr)
        raise Unavailable(f"the clone could not answer: {exc}") from None
    except FileNotFoundError:
        raise Unavailable("git is not installed where `relored serve` runs") from None
    return responses.json_response(envelope.wrap(page))


async def why_endpoint(request: Request) -> Response:
    return await _answer(request, why_mod.parse_request, why_mod.why, database=True)


# symbol, grep and copies take the pool as a keyword: the lines they print are redacted by
# the marts' catalog through it (relore.serve.clone.redaction)


async def symbol_endpoint(request: Request) -> Response:
    return await _answer(request, symbol.parse_symbol, symbol.symbol)


async def grep_endpoint(request: Request) -> Response:
    return await _answer(request, grep.parse_grep, grep.grep)


async def copies_endpoint(request: Request) -> Response:
    return await _answer(request, copies.parse_copies, copies.copies)


def routes(prefix: str) -> list[Route]:
    return [
        Route(f"{prefix}/why", why_endpoint),
        Route(f"{prefix}/code/symbol", symbol_endpoint),
        Route(f"{prefix}/code/grep", grep_endpoint),
        Route(f"{prefix}/code/copies", copies_endpoint),
    ]
