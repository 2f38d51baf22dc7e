"""The read service: a small Starlette app over the marts, on a SELECT-only role.

``create_app(settings)`` builds it; the lifespan owns the connection pool. Every response
carries ``x-relore-version``; a request declaring another client version gets 426.

The middlewares are ``middleware.py``; running the daemon (uvicorn, workers) is
``runner.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from relore.contract import envelope, render, wire
from relore.contract.version import __version__
from relore.serve import auth, errors, inputs, labels, notices, openapi, readiness, responses, web
from relore.serve import precedent as precedent_mod
from relore.serve import search as search_mod
from relore.serve import status as status_mod
from relore.serve import thread as thread_mod
from relore.serve.clone import routes as clone_routes
from relore.serve.middleware import RefuseForeignHost, RefuseNul, TokenAuth, VersionHandshake
from relore.serve.rules import routes as rules_routes
from relore.serve.rules import sessions as rules_sessions

log = logging.getLogger("relore.serve")


@dataclass(frozen=True)
class Settings:
    database_url: str
    tokens: dict = field(default_factory=dict)  # token -> scopes; empty: no auth (loopback)
    labels_path: str | None = None  # RELORE_LABELS_PATH: where relevance labels are appended
    pool_min: int = 1
    pool_max: int = 4
    statement_timeout_ms: int = 10_000
    work_mem_mb: int = 32
    # how long a request waits for a pooled connection before a 503 with Retry-After
    pool_wait_s: float = 1.0
    # with no tokens, the Host names answered besides loopback (RELORE_ALLOWED_HOSTS, --host)
    allowed_hosts: tuple[str, ...] = ()
    # signs rules session tokens; every worker and replica must hold the same key (`run`
    # loads RELORE_SESSION_KEY or $RELORE_HOME/session-key). None: a random key of this
    # app's own, so its tokens answer only to it (tests, one in-process app)
    session_key: bytes | None = None
    session_ttl_s: float = rules_sessions.DEFAULT_TTL_SECONDS


_json = responses.json_response
_refusal = responses.refusal


def _pool(request: Request) -> AsyncConnectionPool:
    return request.app.state.pool


def _page(page: dict, chosen: str, renderer) -> Response:
    """The page enveloped; as text, rendered by the client's one renderer (never a copy), so
    the web page's "view as the model sees it" shows exactly what an agent reads."""
    wrapped = envelope.wrap(page)
    if chosen == "text":
        text = render.enveloped(wrapped, renderer(wrapped)) + "\n"
        return PlainTextResponse(text, headers={"x-content-type-options": "nosniff"})
    return _json(wrapped)


# Every route below parses its query with relore.serve.inputs and raises a RequestError
# (errors.py) for a refusal; a repository is resolved to its repo_id once, inside the verb
# (repos.require: a 404 naming what is indexed). create_app maps both to responses.


# How often a daemon asks its server whether it is a standby and how far behind: a page
# carries the answer read at most this long ago.
WHERE_EVERY_S = 1.0


async def _said_where(request: Request, conn, page: dict) -> dict:
    """Lead the page with ``standby_behind`` when the server it was read from is a standby
    behind its primary (asked at most once per ``WHERE_EVERY_S`` per daemon)."""
    state = request.app.state
    checked, where = state.where
    if time.monotonic() - checked >= WHERE_EVERY_S:
        async with conn.cursor(row_factory=dict_row) as cur:
            where = await status_mod.replica(cur)
        state.where = (time.monotonic(), where)
    page["notices"] = notices.standby_behind(where) + page["notices"]
    return page


async def search_endpoint(request: Request) -> Response:
    search_request = search_mod.parse_request(request.query_params)
    chosen = inputs.output_format(request.query_params)
    async with _pool(request).connection() as conn:
        page = await _said_where(request, conn, await search_mod.search(conn, search_request))
    # whether POST /label records anything here: the page at / shows its buttons only then
    page["labelling"] = bool(request.app.state.settings.labels_path)
    return _page(page, chosen, render.search_page)


async def precedent_endpoint(request: Request) -> Response:
    precedent_request = precedent_mod.parse_request(request.query_params)
    chosen = inputs.output_format(request.query_params)
    async with _pool(request).connection() as conn:
        page = await precedent_mod.precedent(conn, precedent_request)
        page = await _said_where(request, conn, page)
    return _page(page, chosen, render.precedent_page)


async def thread_endpoint(request: Request) -> Response:
    thread_request = thread_mod.parse_request(request.query_params)
    chosen = inputs.output_format(request.query_params)
    async with _pool(request).connection() as conn:
        page = await thread_mod.thread(conn, thread_request)
        if page is None:
            raise errors.NotFound(f"{thread_request.repo}#{thread_request.number} is not indexed")
        page = await _said_where(request, conn, page)
    return _page(page, chosen, render.thread_page)


async def inflight_endpoint(request: Request) -> Response:
    thread_request = thread_mod.parse_inflight(request.query_params)
    chosen = inputs.output_format(request.query_params)
    async with _pool(request).connection() as conn:
        page = await thread_mod.inflight(conn, thread_request.repo, thread_request.number)
        if page is None:
            raise errors.NotFound(f"{thread_request.repo}#{thread_request.number} is not indexed")
        page = await _said_where(request, conn, page)
    return _page(page, chosen, render.inflight_page)


async def status_endpoint(request: Request) -> Response:
    repo = inputs.parse("status", request.query_params)["repo"]
    chosen = inputs.output_format(request.query_params)
    async with _pool(request).connection() as conn:
        page = await status_mod.status(conn, repo)
    return _page(page, chosen, render.status_page)


async def label_endpoint(request: Request) -> Response:
    settings: Settings = request.app.state.settings
    if not settings.labels_path:
        raise errors.NotFound(
            "labelling is off: the operator sets RELORE_LABELS_PATH to turn it on"
        )
    scopes = request.scope.get("state", {}).get("scopes")
    if settings.tokens and (scopes is None or "label" not in scopes):
        raise errors.Forbidden("labelling needs a token with the label scope")
    labels.check(request)
    label = labels.parse(await labels.read_body(request))
    who = "token" if settings.tokens else "loopback"
    record = labels.append(Path(settings.labels_path), label, who)
    return _json({"recorded": True, "at": record["at"]}, 201)


async def openapi_endpoint(request: Request) -> Response:
    return _json(openapi.document())


async def health_endpoint(request: Request) -> Response:
    try:
        async with _pool(request).connection() as conn:
            await conn.execute("select 1")
    except psycopg.Error as exc:  # health is a report, never a crash
        return await _database_error(request, exc)
    return _json({"ok": True, "version": __version__})


async def ready_endpoint(request: Request) -> Response:
    """Readiness (a load balancer's probe): the marts readable and every repository's
    search index built here; building what is missing meanwhile (serve/readiness.py)."""
    page = await readiness.check(_pool(request), request.app.state.warming)
    return _json({**page, "version": __version__})


DATABASE_DOWN = (
    "the database is unreachable: start it with `relored db start`, or check "
    "RELORE_DATABASE_URL (RELORE_READER_DATABASE_URL) where `relored serve` runs"
)
# a mart this daemon reads lacks a column a newer release added: the incremental build stops
# on on_schema_change='fail' until the model is rebuilt once
MARTS_OLDER = (
    "the marts are older than this daemon (a column it reads is missing): run `dbt build`; "
    "a mart that gained a column needs `dbt run --full-refresh --select <model>` once, then "
    "`dbt build` (docs/operations.md, upgrades)"
)
POOL_BUSY = "every database connection is busy with other requests: retry in a moment"
# reachable, but the pool holds no connection to lend and none is lent: it is still opening
# them (the database was down or starting a moment ago: `relored db start`)
POOL_CONNECTING = (
    "the database was unreachable a moment ago and this daemon is still opening its "
    "connections to it: retry in a few seconds"
)
# the server answers, but refuses connections while it starts, stops or recovers
DATABASE_STARTING = "the database is starting up or shutting down: retry in a few seconds"


PROBE_EVERY_S = 1.0


async def _reachable(app: Starlette) -> bool | None:
    """Whether the database takes a new connection (None: it answers but refuses while it
    starts or stops): one probe at a time, its answer kept
    for ``PROBE_EVERY_S``, so a flood of 503s is not a flood of connections."""
    state = app.state
    async with state.probe_lock:
        checked, answer = state.probe
        if time.monotonic() - checked < PROBE_EVERY_S:
            return answer
        try:
            conn = await asyncio.wait_for(
                psycopg.AsyncConnection.connect(state.settings.database_url), 0.8
            )
        except psycopg.errors.CannotConnectNow:
            answer = None  # there, refusing while it starts or stops
        except psycopg.OperationalError as exc:
            answer = None if _starting(exc) else False
        except (psycopg.Error, TimeoutError):
            answer = False
        else:
            await conn.close()
            answer = True
        state.probe = (time.monotonic(), answer)
        return answer


def _starting(exc: Exception) -> bool:
    """A refusal the server gives while it starts, stops or recovers (SQLSTATE 57P03; libpq
    reports it as a connection failure naming the state)."""
    text = str(exc)
    return any(s in text for s in ("starting up", "shutting down", "in recovery mode"))


def _lent_out(pool: AsyncConnectionPool) -> bool:
    """Whether every connection the pool may hold is lent to a request (saturated), as
    opposed to the pool holding fewer than it may (still connecting)."""
    stats = pool.get_stats()
    lent = stats.get("pool_size", 0) - stats.get("pool_available", 0)
    return lent >= pool.max_size


async def _database_error(request: Request, exc: Exception) -> Response:
    """Every database failure is a 503 that says what to do, never a bare exception name."""
    return _refusal(await _unavailable_because(request, exc))


async def _unavailable_because(request: Request, exc: Exception) -> errors.Unavailable:
    if isinstance(exc, PoolTimeout):
        # saturated (every connection lent out) or down (the pool cannot open one)
        reachable = await _reachable(request.app)
        if reachable and _lent_out(request.app.state.pool):
            log.warning("pool saturated on %s", request.url.path)
            return errors.Unavailable(POOL_BUSY, retry_after=1)
        if reachable:
            log.warning("pool still connecting on %s", request.url.path)
            return errors.Unavailable(POOL_CONNECTING, retry_after=2)
        if reachable is None:
            log.warning("database starting or stopping on %s", request.url.path)
            return errors.Unavailable(DATABASE_STARTING, retry_after=2)
        log.warning("database unreachable on %s", request.url.path)
        return errors.Unavailable(DATABASE_DOWN, retry_after=5)
    log.warning("database error on %s: %s: %s", request.url.path, type(exc).__name__, exc)
    if isinstance(exc, psycopg.errors.UndefinedTable):
        return errors.Unavailable("the index has not been built: run `dbt build`")
    if isinstance(exc, psycopg.errors.UndefinedColumn):
        return errors.Unavailable(MARTS_OLDER)
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return errors.Unavailable("the query took too long and was cancelled")
    if isinstance(exc, psycopg.OperationalError):  # AdminShutdown, a dropped connection
        return errors.Unavailable(DATABASE_DOWN, retry_after=5)
    return errors.Unavailable(f"database error: {type(exc).__name__}")


async def _refused(request: Request, exc: errors.RequestError) -> Response:
    """Every refusal a route raises, through the one encoder and sanitiser."""
    return _refusal(exc)


def create_app(settings: Settings) -> Starlette:
    async def configure(conn: psycopg.AsyncConnection) -> None:
        await conn.set_autocommit(True)
        await conn.execute(f"set statement_timeout = {int(settings.statement_timeout_ms)}")
        # ranking sorts every match before the caps apply: keep those sorts in memory
        await conn.execute(f"set work_mem = '{int(settings.work_mem_mb)}MB'")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        pool = AsyncConnectionPool(
            settings.database_url,
            min_size=settings.pool_min,
            max_size=settings.pool_max,
            configure=configure,
            # a connection the server dropped (a restart, pg_terminate_backend) is replaced,
            # not lent to a request; and a request waits at most pool_wait_s for one
            check=AsyncConnectionPool.check_connection,
            timeout=settings.pool_wait_s,
            open=False,
        )
        await pool.open(wait=False)
        app.state.pool = pool
        app.state.probe_lock, app.state.probe = asyncio.Lock(), (float("-inf"), False)
        app.state.warming = readiness.Warming()
        app.state.where = (float("-inf"), {"standby": False})
        try:
            yield
        finally:
            await pool.close()

    routes = [
        Route(f"{wire.API_PREFIX}/search", search_endpoint),
        Route(f"{wire.API_PREFIX}/precedent", precedent_endpoint),
        Route(f"{wire.API_PREFIX}/status", status_endpoint),
        Route(f"{wire.API_PREFIX}/label", label_endpoint, methods=["POST"]),
        Route(f"{wire.API_PREFIX}/thread", thread_endpoint),
        Route(f"{wire.API_PREFIX}/inflight", inflight_endpoint),
        Route(f"{wire.API_PREFIX}/openapi.json", openapi_endpoint),
        *rules_routes.routes(wire.API_PREFIX),
        *clone_routes.routes(wire.API_PREFIX),  # answered from the working clone
        Route("/healthz", health_endpoint),
        Route("/readyz", ready_endpoint),
        *web.routes(),  # the page for people at /
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={errors.RequestError: _refused, psycopg.Error: _database_error},
    )
    app.state.settings = settings
    app.state.session_key = settings.session_key or secrets.token_bytes(32)
    app.add_middleware(RefuseNul)
    app.add_middleware(TokenAuth, tokens=settings.tokens)
    app.add_middleware(VersionHandshake)  # a version mismatch is said first...
    if not settings.tokens:  # ...after a foreign Host: a rebound page learns nothing
        hosts = frozenset(auth.LOOPBACK_NAMES) | {h.lower() for h in settings.allowed_hosts}
        app.add_middleware(RefuseForeignHost, allowed=hosts)
    return app
