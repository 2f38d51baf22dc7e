"""The client against a wrong RELORE_API: not a URL, nothing listening, a server that is not
relore (any status, HTML, or not HTTP at all), and one that redirects to another origin.
Each is the real CLI ``main()`` against a real local server: one line naming RELORE_API,
an exit status ``relore --help`` documents, never a traceback, another server's page, or the
token sent to a second origin."""

from __future__ import annotations

import contextlib
import http.server
import io
import socket
import threading
from contextlib import contextmanager

import pytest

from relore.client import cli

TOKEN = "client-token-never-leaves-0123"


class _Recorder(http.server.BaseHTTPRequestHandler):
    status = 200
    body = b"<html><body><h1>Welcome to nginx!</h1></body></html>"
    location = None
    seen: list

    def do_GET(self):
        self.seen.append(dict(self.headers.items()))
        self.send_response(self.status)
        if self.location:
            self.send_header("Location", self.location)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args):
        pass


@contextmanager
def _server(**attrs):
    handler = type("Handler", (_Recorder,), {"seen": [], **attrs})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler.seen
    finally:
        server.shutdown()
        server.server_close()


def _relore(api: str, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    env = {"RELORE_API": api, "RELORE_API_TOKEN": TOKEN}
    code = cli.main(list(argv or ["status"]), env=env, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _one_line_naming_the_variable(err: str) -> None:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "RELORE_API" in err, err
    assert "Traceback" not in err and "<" not in err, err


def test_redirect_to_another_origin_never_carries_the_token():
    with (
        _server() as (elsewhere, seen_elsewhere),
        _server(status=302, location=f"{elsewhere}/api/v1/status") as (api, seen),
    ):
        code, out, err = _relore(api)
    assert seen, "the first server was never asked"
    leaked = [h for h in seen_elsewhere if TOKEN in str(h.values())]
    assert not leaked, "the token was sent to the redirect's origin"
    assert not seen_elsewhere, "a cross-origin redirect was followed"
    assert code == cli.ExitStatus.DAEMON_DOWN and out == ""
    _one_line_naming_the_variable(err)
    assert "redirect" in err


@pytest.mark.parametrize("status", [200, 404, 500])
def test_a_server_that_is_not_relore_is_one_line_naming_relore_api(status):
    with _server(status=status) as (api, _):
        code, out, err = _relore(api)
    assert code == cli.ExitStatus.DAEMON_DOWN and out == ""
    _one_line_naming_the_variable(err)
    assert "nginx" not in err


@pytest.mark.parametrize("value", ["localhost:8080", "not a url", "ftp://127.0.0.1/", "http://"])
def test_relore_api_that_is_not_an_http_url_is_a_usage_error(value):
    code, out, err = _relore(value)
    assert code == cli.ExitStatus.USAGE and out == ""
    _one_line_naming_the_variable(err)


def test_a_port_with_nothing_listening_is_daemon_down_naming_relore_api():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed when the block ends: nothing listens there
    code, out, err = _relore(f"http://127.0.0.1:{port}")
    assert code == cli.ExitStatus.DAEMON_DOWN and out == ""
    _one_line_naming_the_variable(err)


def test_a_server_that_does_not_speak_http_is_one_line_not_a_traceback():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def banner():
        conn, _ = listener.accept()
        conn.recv(4096)
        conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
        conn.close()

    thread = threading.Thread(target=banner, daemon=True)
    thread.start()
    try:
        code, out, err = _relore(f"http://127.0.0.1:{listener.getsockname()[1]}")
    finally:
        listener.close()
    assert code == cli.ExitStatus.DAEMON_DOWN and out == ""
    _one_line_naming_the_variable(err)


def test_help_documents_every_exit_status():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["--help"], env={}) == cli.ExitStatus.OK
    text = out.getvalue()
    for status in cli.ExitStatus:
        assert f"{status.value} " in text and status.name.lower().replace("_", " ") in text.lower()
