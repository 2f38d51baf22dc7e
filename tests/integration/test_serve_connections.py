"""Slow headers cannot exhaust the daemon (serve/connections.py): a real ``relored serve``
process, half-sent requests that never finish, and ``/healthz`` answering throughout.

Before the guard, 19,990 such connections filled all 20,000 descriptors of a daemon and its
``/healthz`` timed out; here the cap is lowered (``RELORE_MAX_CONNECTIONS``) so ~50 show it.
"""

from __future__ import annotations

import os
import selectors
import socket
import time
from pathlib import Path

import httpx
import pytest
from fixtures import daemon as daemons

HALF_SENT = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _env(pg_cluster, **limits: str) -> dict:
    env = {**os.environ, "RELORE_READER_DATABASE_URL": pg_cluster.url(database="postgres")}
    for name in ("RELORE_DATABASE_URL", "RELORE_API_TOKENS", "RELORE_HOME"):
        env.pop(name, None)
    return {**env, **limits}


def _half_sent(base: str, count: int) -> list[socket.socket]:
    host, port = base.removeprefix("http://").split(":")
    opened = []
    for _ in range(count):
        sock = socket.create_connection((host, int(port)))
        sock.sendall(HALF_SENT)
        opened.append(sock)
    return opened


def _what_the_daemon_said(sock: socket.socket, wait_s: float = 60) -> bytes | None:
    """Everything the daemon sent until it closed the connection (b"" or what it wrote;
    a reset reads as b""), or None if it kept it open past ``wait_s``."""
    sock.settimeout(wait_s)
    said = b""
    try:
        while chunk := sock.recv(4096):
            said += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        return None
    finally:
        sock.close()
    return said


def _healthy(base: str) -> bool:
    return httpx.get(base + "/healthz", timeout=10).status_code == 200


@pytest.fixture
def log(tmp_path) -> Path:
    return tmp_path / "serve.log"


def test_half_sent_headers_are_closed_after_the_request_timeout(pg_cluster, log):
    env = _env(pg_cluster, RELORE_REQUEST_TIMEOUT_S="2", RELORE_MAX_CONNECTIONS="200")
    with daemons.serving(env, log) as base:
        stalled = _half_sent(base, 50)
        assert _healthy(base), "healthz did not answer beside 50 half-sent requests"
        said = [_what_the_daemon_said(sock) for sock in stalled]
        assert None not in said, f"{said.count(None)} half-sent requests were held open"
        assert all(s.startswith(b"HTTP/1.1 408") for s in said), said[:3]
        assert _healthy(base)


def _closed_within(socks: list[socket.socket], seconds: float) -> int:
    """How many of ``socks`` the daemon closed (or reset) within ``seconds``; every one is
    closed here after."""
    open_ = {sock.fileno(): sock for sock in socks}
    closed = 0
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as watch:
        for sock in socks:
            watch.register(sock, selectors.EVENT_READ)
        while open_ and (left := deadline - time.monotonic()) > 0:
            for key, _ in watch.select(left):
                sock = key.fileobj
                try:
                    ended = sock.recv(4096) == b""
                except ConnectionResetError:
                    ended = True
                if ended:
                    closed += 1
                    watch.unregister(sock)
                    open_.pop(sock.fileno())
    for sock in socks:
        sock.close()
    return closed


def test_stalled_connections_past_the_cap_make_room_and_healthz_still_answers(pg_cluster, log):
    """One worker: a new connection at the cap closes the one that waited longest."""
    env = _env(pg_cluster, RELORE_REQUEST_TIMEOUT_S="300", RELORE_MAX_CONNECTIONS="20")
    with daemons.serving(env, log, workers=1) as base:
        stalled = _half_sent(base, 50)
        # a new connection at the cap closes the one that waited longest for its request
        assert _healthy(base), "healthz did not answer with the connection cap full"
        oldest = [_what_the_daemon_said(sock) for sock in stalled[:30]]
        assert None not in oldest, f"{oldest.count(None)} of the oldest stalled were kept"
        assert _healthy(base)
        for sock in stalled[30:]:
            sock.close()


def test_every_worker_holds_at_most_the_cap_of_stalled_connections(pg_cluster, log):
    """Several workers (the default is one a core): the cap bounds each process's
    descriptors, so 50 stalled connections over two workers capped at 20 leave at most 40
    open, whichever worker the kernel handed each to, and /healthz still answers."""
    env = _env(pg_cluster, RELORE_REQUEST_TIMEOUT_S="300", RELORE_MAX_CONNECTIONS="20")
    with daemons.serving(env, log, workers=2) as base:
        stalled = _half_sent(base, 50)
        assert _healthy(base), "healthz did not answer with both workers at the cap"
        closed = _closed_within(stalled, seconds=5)
        assert closed >= 50 - 2 * 20, f"only {closed} of 50 stalled were closed: over the cap"
        assert _healthy(base)


def test_a_bad_connection_limit_is_refused_before_listening(pg_cluster, log):
    env = _env(pg_cluster, RELORE_MAX_CONNECTIONS="3")
    with pytest.raises(RuntimeError, match="RELORE_MAX_CONNECTIONS"), daemons.serving(env, log):
        pass
