"""Routes answered from the working clone: ``/why``, ``/code/symbol``, ``/code/grep``,
``/code/copies``.

Query parameters: every route takes ``repo`` (owner/name). ``why``: ``path`` (relative to
the repository root), ``line`` (1 or more). ``symbol``: ``name`` (an identifier), ``path``
(a directory or file to narrow to), ``limit``. ``grep``: ``pattern`` (an extended regular
expression, or a fixed string with ``fixed=1``), ``ignore_case``, ``path``, ``limit``.
``copies``: ``name`` (an identifier or dotted name), ``limit``.

Bad input is a 400, something the clone does not hold a 404, a repository with no clone (or
a daemon that cannot run git or parse the tree) a 503 that says what to do. Never a 500.
"""

from __future__ import annotations

import logging

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from relore.serve import envelope, responses
from relore.serve.code import clones, lens
from relore.serve.code import why as why_mod
from relore.serve.code.git import GitFailed, GitTimeout

log = logging.getLogger("relore.serve.code")


_json = responses.json_response
_error = responses.error_response


async def _answer(request: Request, parse, work, *, database: bool = False) -> Response:
    try:
        parsed = parse(request.query_params)
        repo = parsed.repo if hasattr(parsed, "repo") else parsed["repo"]
        clone = clones.clone_for(repo)
        if database:
            page = await work(request.app.state.pool, parsed, clone)
        else:
            page = await work(parsed, clone)
    except clones.BadRequest as exc:
        return _error(400, str(exc))
    except clones.NotFound as exc:
        return _error(404, str(exc))
    except clones.NoClone as exc:
        return _error(503, str(exc), command=exc.command)
    except (clones.NoGrammar, clones.TooSlow) as exc:
        return _error(503, str(exc))
    except GitTimeout as exc:
        return _error(503, f"{exc} took longer than this daemon allows a request")
    except GitFailed as exc:
        log.warning("git failed on %s: %s", request.url.path, exc.stderr)
        return _error(503, f"the clone could not answer: {exc}")
    except FileNotFoundError:
        return _error(503, "git is not installed where `relored serve` runs")
    return _json(envelope.wrap(page))


async def why_endpoint(request: Request) -> Response:
    return await _answer(request, why_mod.parse_request, why_mod.why, database=True)


async def symbol_endpoint(request: Request) -> Response:
    return await _answer(request, lens.parse_symbol, lens.symbol)


async def grep_endpoint(request: Request) -> Response:
    return await _answer(request, lens.parse_grep, lens.grep)


async def copies_endpoint(request: Request) -> Response:
    return await _answer(request, lens.parse_copies, lens.copies)


def routes(prefix: str) -> list[Route]:
    return [
        Route(f"{prefix}/why", why_endpoint),
        Route(f"{prefix}/code/symbol", symbol_endpoint),
        Route(f"{prefix}/code/grep", grep_endpoint),
        Route(f"{prefix}/code/copies", copies_endpoint),
    ]
