"""Bounded work under abuse, and the HTTP surface: attacks on a running daemon.

A pool held by slow queries, a database that is down or stops under the daemon, a request
whose Host is a rebinding attacker's name, and labels posted the way a hostile page would.
"""

from __future__ import annotations

import json
import logging
import time

import psycopg
import pytest
from fixtures import loop_watch
from starlette.testclient import TestClient

from relore.contract.version import __version__
from relore.operate import database
from relore.serve.app import Settings, create_app

HEADERS = {"x-relore-client": __version__}
LOOPBACK = "http://127.0.0.1"


def _client(app) -> TestClient:
    return TestClient(app, base_url=LOOPBACK)


def _no_tracebacks(caplog) -> None:
    traced = [r for r in caplog.records if r.exc_info]
    assert not traced, [r.getMessage() for r in traced]


# --- the pool ---------------------------------------------------------------------------------


def test_saturated_pool_is_a_prompt_503_with_retry_after_not_a_30s_queue(db_url, caplog):
    reader = database.reader_url(db_url, env={})
    app = create_app(Settings(reader, pool_min=1, pool_max=1))
    with _client(app) as client:
        assert client.get("/healthz").status_code == 200
        pool = app.state.pool

        async def slow_query():
            async with pool.connection() as conn:
                await conn.execute("select pg_sleep(8)")

        holder = client.portal.start_task_soon(slow_query)
        time.sleep(0.3)  # the one connection is now lent to the slow query
        started = time.monotonic()
        response = client.get("/api/v1/status", headers=HEADERS)
        elapsed = time.monotonic() - started
        holder.result(timeout=15)
    assert elapsed < 5, f"waited {elapsed:.1f}s for a connection"
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert "busy" in response.json()["error"]
    assert "PoolTimeout" not in response.text
    _no_tracebacks(caplog)


def test_an_expensive_statement_is_cancelled_and_gives_its_connection_back(db_url):
    """statement_timeout is set on every pooled reader connection: one slow statement holds
    its connection no longer than that (a guard: this held before the change too)."""
    reader = database.reader_url(db_url, env={})
    app = create_app(Settings(reader, pool_min=1, pool_max=1, statement_timeout_ms=300))
    with _client(app) as client:
        pool = app.state.pool

        async def expensive():
            async with pool.connection() as conn:
                await conn.execute("select pg_sleep(10)")

        started = time.monotonic()
        with pytest.raises(psycopg.errors.QueryCanceled):
            client.portal.call(expensive)
        cancelled_after = time.monotonic() - started
        assert client.get("/healthz").status_code == 200
    assert cancelled_after < 5, f"the statement ran {cancelled_after:.1f}s"


# --- the database down ------------------------------------------------------------------------

DOWN_URL = "postgresql://relore_reader@/relore?host=/nonexistent-relore-socket-dir"


@pytest.mark.parametrize(
    "path", ["/healthz", "/readyz", "/api/v1/status", "/api/v1/search?q=error"]
)
def test_daemon_started_with_the_database_down_says_what_to_do_within_2s(path, caplog):
    caplog.set_level(logging.WARNING)
    with _client(create_app(Settings(DOWN_URL))) as client:
        started = time.monotonic()
        response = client.get(path, headers=HEADERS)
        elapsed = time.monotonic() - started
    assert response.status_code == 503
    error = response.json()["error"]
    assert "relored db start" in error and "RELORE_DATABASE_URL" in error
    assert "PoolTimeout" not in error and "retry-after" in response.headers
    assert elapsed < 2.5, f"took {elapsed:.1f}s to say the database is down"
    _no_tracebacks(caplog)


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_a_database_started_after_the_daemon_is_not_called_a_busy_pool(db_url, tmp_path):
    """Right after `relored db start` under a running daemon, nothing else runs: the pool is
    still opening its connections, which is not "every connection is busy"."""
    reader = database.reader_url(db_url, env={})
    socket_dir = psycopg.conninfo.conninfo_to_dict(reader)["host"]
    later = tmp_path / "socket-later"  # the database's socket directory, not there yet
    url = psycopg.conninfo.make_conninfo(reader, host=str(later))
    with _client(create_app(Settings(url))) as client:
        down = client.get("/api/v1/status", headers=HEADERS)
        assert down.status_code == 503 and "relored db start" in down.json()["error"]
        for _ in range(4):  # the pool fails again and again, and backs off longer each time
            client.get("/api/v1/status", headers=HEADERS)
            time.sleep(1.5)
        later.symlink_to(socket_dir)  # the database is up now
        time.sleep(1.1)  # past the reachability probe's kept answer
        response = client.get("/api/v1/status", headers=HEADERS)
    if response.status_code == 503:
        error = response.json()["error"]
        assert "busy" not in error, error
        assert "retry" in error and "retry-after" in response.headers


def test_readyz_before_the_first_build_says_to_run_it(db_url):
    """Migrated, never built: alive (/healthz) but not ready, and the page says the fix."""
    with _client(create_app(Settings(database.reader_url(db_url, env={})))) as client:
        alive, ready = client.get("/healthz"), client.get("/readyz")
    assert alive.status_code == 200
    assert ready.status_code == 503
    assert "run `dbt build`" in ready.json()["error"]


def test_terminated_backends_are_replaced_never_served_as_admin_shutdown(db_url, pg_cluster):
    reader = database.reader_url(db_url, env={})
    app = create_app(Settings(reader, pool_min=2, pool_max=2))
    with _client(app) as client:
        assert client.get("/api/v1/status", headers=HEADERS).status_code == 503  # no marts
        name = psycopg.conninfo.conninfo_to_dict(db_url)["dbname"]
        with psycopg.connect(pg_cluster.url(database=name), autocommit=True) as admin:
            killed = admin.execute(
                "select count(pg_terminate_backend(pid)) from pg_stat_activity "
                "where usename = 'relore_reader' and datname = current_database()"
            ).fetchone()[0]
        assert killed >= 1
        time.sleep(0.2)
        # the pool checks a connection before lending it: a dead one is replaced (the first
        # request may wait out the pool's one-second backoff: then a 503 that says retry)
        responses = [client.get("/healthz") for _ in range(3)]
    for response in responses:
        assert response.status_code in (200, 503), response.text
        assert "AdminShutdown" not in response.text and "PoolTimeout" not in response.text
        if response.status_code == 503:
            assert response.headers["retry-after"]
    assert responses[-1].status_code == 200


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_database_stopped_under_a_running_daemon_fails_fast_and_says_so(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    paths = database.EmbeddedPaths(tmp_path / "pg")
    database.start_embedded(paths)
    try:
        app = create_app(Settings(paths.url(database="postgres"), pool_min=2, pool_max=2))
        with _client(app) as client:
            assert client.get("/healthz").status_code == 200
            database.stop_embedded(paths)
            timings = []
            for path in ("/healthz", "/api/v1/status"):
                started = time.monotonic()
                response = client.get(path, headers=HEADERS)
                timings.append(time.monotonic() - started)
                assert response.status_code == 503, response.text
                error = response.json()["error"]
                assert "relored db start" in error, error
                assert "AdminShutdown" not in error and "PoolTimeout" not in error
    finally:
        database.stop_embedded(paths)
    assert max(timings) < 2.5, timings
    _no_tracebacks(caplog)


# --- Host: DNS rebinding ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "10.0.0.5"]
)
def test_loopback_daemon_refuses_a_rebound_host_header(host):
    app = create_app(Settings(DOWN_URL))
    with _client(app) as client:
        for path in ("/api/v1/code/grep?repo=a/b&pattern=x", "/", "/api/v1/status"):
            response = client.get(path, headers={**HEADERS, "host": host})
            assert response.status_code == 400, (path, response.status_code)
            assert "RELORE_ALLOWED_HOSTS" in response.json()["error"]


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8080", "localhost", "localhost:9", "[::1]", "[::1]:8080"]
)
def test_loopback_names_with_or_without_a_port_are_answered(host):
    with _client(create_app(Settings(DOWN_URL))) as client:
        assert client.get("/api/v1/openapi.json", headers={**HEADERS, "host": host}).is_success


def test_a_configured_host_name_is_answered():
    app = create_app(Settings(DOWN_URL, allowed_hosts=("relore.internal",)))
    with _client(app) as client:
        ok = client.get("/api/v1/openapi.json", headers={**HEADERS, "host": "relore.internal:80"})
        bad = client.get("/api/v1/openapi.json", headers={**HEADERS, "host": "evil.example"})
    assert ok.status_code == 200 and bad.status_code == 400


# --- POST /api/v1/label -----------------------------------------------------------------------

LABEL = {"query": "zanzibar quokka", "document_id": "issue_comment:1", "grade": 2}
LABELLER = "labeller-only-token-0123456789"


@pytest.fixture
def labelled(tmp_path):
    """A labelling daemon on a debug loop: no hostile label holds it over 100 ms."""
    path = tmp_path / "labels.jsonl"
    app = create_app(Settings(DOWN_URL, labels_path=str(path)))
    with loop_watch.watching() as seen, loop_watch.client(app) as client:
        yield client, path
    loop_watch.never_blocked(seen)


def _lines(path) -> list:
    return path.read_text().splitlines() if path.exists() else []


def test_label_posted_as_a_simple_form_is_415(labelled):
    client, path = labelled
    for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {**HEADERS, **({"content-type": content_type} if content_type else {})}
        response = client.post("/api/v1/label", content=json.dumps(LABEL), headers=headers)
        assert response.status_code == 415, (content_type, response.status_code)
    assert _lines(path) == []


def test_label_from_another_origin_is_403(labelled):
    client, path = labelled
    for origin in ("http://evil.example", "null", "http://127.0.0.1:1"):
        response = client.post("/api/v1/label", json=LABEL, headers={**HEADERS, "origin": origin})
        assert response.status_code == 403, (origin, response.status_code)
    same = client.post("/api/v1/label", json=LABEL, headers={**HEADERS, "origin": LOOPBACK})
    assert same.status_code == 201
    assert len(_lines(path)) == 1


def test_label_body_over_the_limit_is_413_before_it_is_read(labelled):
    from relore.serve import labels

    client, path = labelled
    big = json.dumps({**LABEL, "note": "x" * (labels.MAX_BODY * 4)})
    declared = client.post(
        "/api/v1/label", content=big, headers={**HEADERS, "content-type": "application/json"}
    )
    assert declared.status_code == 413

    def chunks():  # no Content-Length: chunked transfer, refused once past the limit
        for _ in range(64):
            yield b"x" * 4096

    streamed = client.post(
        "/api/v1/label",
        content=chunks(),
        headers={**HEADERS, "content-type": "application/json"},
    )
    assert streamed.status_code == 413
    assert _lines(path) == []


def test_label_only_token_can_label(tmp_path):
    path = tmp_path / "labels.jsonl"
    tokens = {LABELLER: frozenset({"label"})}
    app = create_app(Settings(DOWN_URL, tokens=tokens, labels_path=str(path)))
    with _client(app) as client:
        response = client.post(
            "/api/v1/label", json=LABEL, headers={**HEADERS, "authorization": f"Bearer {LABELLER}"}
        )
        read = client.get(
            "/api/v1/status", headers={**HEADERS, "authorization": f"Bearer {LABELLER}"}
        )
    assert response.status_code == 201, response.text
    assert read.status_code == 403  # the label scope does not read
    assert len(_lines(path)) == 1


@pytest.mark.parametrize("opening, closing", [("[", "]"), ('{"a":', "}")])
def test_label_nested_thousands_deep_is_a_400_not_a_500(tmp_path, opening, closing):
    """8,000 levels deep under the 16 kB limit: the parser's recursion, not the caller's
    mistake, was answered as an internal error."""
    path = tmp_path / "labels.jsonl"
    app = create_app(Settings(DOWN_URL, labels_path=str(path)))
    depth = 8_000 if opening == "[" else 2_500
    deep = opening * depth + "1" + closing * depth
    body = json.dumps(LABEL)[:-1] + ', "note": ' + deep + "}"
    with (
        loop_watch.watching() as seen,
        loop_watch.client(app, raise_server_exceptions=False) as client,
    ):
        response = client.post(
            "/api/v1/label",
            content=body,
            headers={**HEADERS, "content-type": "application/json"},
        )
    assert response.status_code == 400, (response.status_code, response.text)
    assert "nested" in response.json()["error"]
    assert _lines(path) == []
    loop_watch.never_blocked(seen)
