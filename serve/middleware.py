"""The daemon's ASGI middlewares, outermost last as ``create_app`` adds them: the
version handshake (every response stamped, another client version refused with 426), bearer
tokens and their scopes, the Host check without tokens (DNS rebinding), and a NUL in a query
refused before any route."""

from __future__ import annotations

import urllib.parse

from starlette.types import ASGIApp, Receive, Scope, Send

from relore.contract import wire
from relore.contract.version import __version__
from relore.serve import auth, errors, responses

_refusal = responses.refusal


class VersionHandshake:
    """Stamp every response with our version; refuse a client of another version (426)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client_version = None
        for name, value in scope.get("headers", []):
            if name.decode("latin-1").lower() == wire.CLIENT_HEADER:
                client_version = value.decode("latin-1")
        path = scope.get("path", "")
        if path.startswith(wire.API_PREFIX) and not wire.compatible(client_version):
            response = _refusal(
                errors.UpgradeRequired(
                    wire.mismatch_message(client_version or "?", __version__),
                    daemon_version=__version__,
                )
            )
            response.headers[wire.VERSION_HEADER] = __version__
            await response(scope, receive, send)
            return

        async def stamped(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((wire.VERSION_HEADER.encode(), __version__.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, stamped)


class TokenAuth:
    """With tokens configured, every API request needs ``Authorization: Bearer`` with the
    scope its route asks for (``read`` for every read verb, ``label`` for the label route)."""

    def __init__(self, app: ASGIApp, tokens: dict):
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.tokens:
            await self.app(scope, receive, send)
            return
        if not scope.get("path", "").startswith(wire.API_PREFIX):
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope.get("headers", []):
            if name.decode("latin-1").lower() == "authorization":
                header = value.decode("latin-1")
        granted = auth.scopes_for(self.tokens, header)
        if granted is None:
            response = _refusal(
                errors.Unauthorized("this daemon needs a token: set RELORE_API_TOKEN")
            )
            response.headers["www-authenticate"] = "Bearer"
            await response(scope, receive, send)
            return
        needed = auth.scope_for_path(scope.get("path", ""))
        if needed not in granted:
            refused = errors.Forbidden(f"this token lacks the {needed} scope")
            await _refusal(refused)(scope, receive, send)
            return
        scope.setdefault("state", {})["scopes"] = granted
        await self.app(scope, receive, send)


class RefuseForeignHost:
    """Without tokens, answer only requests addressed to this machine by name: a page on
    another site whose name an attacker re-points at 127.0.0.1 (DNS rebinding) sends its own
    name as ``Host``, and is refused before any route reads a clone or the index."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]):
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or "*" in self.allowed:
            await self.app(scope, receive, send)
            return
        host = None
        for name, value in scope.get("headers", []):
            if name == b"host":
                host = value.decode("latin-1")
        if host is not None and auth.host_name(host) not in self.allowed:
            message = (
                f"this daemon does not answer to the Host {host[:100]!r}: only to loopback "
                "and the names in RELORE_ALLOWED_HOSTS (a guard against DNS rebinding)"
            )
            await _refusal(errors.BadRequest(message))(scope, receive, send)
            return
        await self.app(scope, receive, send)


class RefuseNul:
    """Postgres text cannot hold NUL: a request whose query carries one is a clear 400
    here, for every route, before any of them could hand it to SQL (a database error, 503)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = scope.get("query_string", b"") if scope["type"] == "http" else b""
        if b"%00" in query or b"\x00" in query:
            pairs = urllib.parse.parse_qsl(query.decode("latin-1"), keep_blank_values=True)
            if any("\x00" in k or "\x00" in v for k, v in pairs):
                refused = errors.BadRequest("a query parameter contains a NUL character")
                await _refusal(refused)(scope, receive, send)
                return
        await self.app(scope, receive, send)
