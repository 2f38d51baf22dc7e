"""The daemon's connections, bounded (uvicorn's HTTP/1.1 protocol, with two guards).

- **A request arrives whole within ``request_timeout_s`` of its first byte** (headers and
  body), else its connection is closed — with a 408 when no request had started to be
  answered. A slowloris client that half-sends its headers holds a descriptor that long, no
  longer; a new connection's clock starts when it is accepted, a kept-alive one's at the
  next request's first byte (uvicorn's keep-alive timeout closes a silent one).
- **At most ``max_connections`` are open at once.** At the cap, the connection that has
  waited longest for its request (half-sent, or kept alive with nothing sent) is closed to
  make room: a flood of stalled connections pushes out its own oldest, never a request
  being answered. When every open connection is being answered, the new one gets a 503
  and is closed.

uvicorn's own settings do not hold against half-sent headers (measured; docs/operations.md):
``--limit-concurrency`` answers 503 only once a whole request has come, which a half-sent
one never does, and ``--timeout-keep-alive`` runs only after a response. A public daemon
sits behind a reverse proxy all the same: these limits keep the process alive and its
descriptors bounded, the proxy keeps it available.

``relored serve`` reads ``RELORE_REQUEST_TIMEOUT_S`` and ``RELORE_MAX_CONNECTIONS``
(:func:`limits_from_env`) and calls :func:`configure` in every worker before it serves.
"""

from __future__ import annotations

import resource
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_REQUEST_TIMEOUT_S = 10.0
# a connection is a descriptor: the default leaves half the process's for git's pipes, the
# database pool and the search index
MAX_CONNECTIONS_CEILING = 1000
MIN_CONNECTIONS = 8


@dataclass(frozen=True)
class Limits:
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS_CEILING

    def as_dict(self) -> dict:
        return asdict(self)


def default_max_connections() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS_CEILING
    return max(MIN_CONNECTIONS, min(MAX_CONNECTIONS_CEILING, soft // 2))


def limits_from_env(env: Mapping[str, str]) -> Limits:
    """``RELORE_REQUEST_TIMEOUT_S`` (seconds, > 0) and ``RELORE_MAX_CONNECTIONS`` (at least
    ``MIN_CONNECTIONS``); a bad value is a ``ValueError`` that names it."""
    timeout = DEFAULT_REQUEST_TIMEOUT_S
    raw = (env.get("RELORE_REQUEST_TIMEOUT_S") or "").strip()
    if raw:
        try:
            timeout = float(raw)
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= 3600:
            raise ValueError(f"RELORE_REQUEST_TIMEOUT_S must be seconds from 0 to 3600: {raw!r}")
    cap = default_max_connections()
    raw = (env.get("RELORE_MAX_CONNECTIONS") or "").strip()
    if raw:
        if not raw.isdigit() or int(raw) < MIN_CONNECTIONS:
            raise ValueError(
                f"RELORE_MAX_CONNECTIONS must be a whole number of at least {MIN_CONNECTIONS}: "
                f"{raw!r}"
            )
        cap = int(raw)
    return Limits(timeout, cap)


_limits = Limits(DEFAULT_REQUEST_TIMEOUT_S, default_max_connections())


def configure(limits: Limits) -> None:
    """The limits every connection accepted from now on in this process keeps."""
    global _limits
    _limits = limits


def current() -> Limits:
    return _limits


def _plain(status: str, text: str) -> bytes:
    body = text.encode()
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body


TIMED_OUT = _plain("408 Request Timeout", "the request did not arrive in time\n")
FULL = _plain("503 Service Unavailable", "every connection this daemon keeps is busy\n")

# per server: the connections waiting for a request, longest waiting first
_waiting: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the request-read deadline and the connection cap."""

    _refused = False
    _deadline = None

    def _queue(self) -> OrderedDict:
        queue = _waiting.get(self.server_state)
        if queue is None:
            queue = _waiting[self.server_state] = OrderedDict()
        return queue

    def connection_made(self, transport) -> None:  # type: ignore[override]
        limits = current()
        if len(self.connections) >= limits.max_connections:
            queue = self._queue()
            if queue:
                oldest = next(iter(queue))
                oldest._close(None)  # it waited longest for a request that never came
            else:
                self._refused = True
                self.transport = transport
                transport.write(FULL)
                transport.close()
                return
        super().connection_made(transport)
        self._await_request(limits)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._await_request(current())  # a kept-alive connection's next request begins
        super().data_received(data)
        if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._arrived()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        self._arrived()
        super().connection_lost(exc)

    def _await_request(self, limits: Limits) -> None:
        self._deadline = self.loop.call_later(limits.request_timeout_s, self._timed_out)
        self._queue()[self] = None

    def _arrived(self) -> None:
        """The request is read whole (or the connection is gone): no deadline, no longer
        the first to be closed at the cap."""
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._queue().pop(self, None)

    def _timed_out(self) -> None:
        self._deadline = None
        answering = self.cycle is not None and not self.cycle.response_complete
        self._close(None if answering else TIMED_OUT)

    def _close(self, said: bytes | None) -> None:
        self._arrived()
        self.connections.discard(self)
        if self.transport.is_closing():
            return
        if said is not None and self.conn.our_state is h11.IDLE:
            self.transport.write(said)
            self.transport.close()
        else:
            self.transport.abort()
