"""The code lens under abuse: a request's deadline covers its wait for a git slot, a client
that goes away takes its git processes with it, and ``symbol`` parsing is capped and stops
at its deadline instead of running on after the 503.

Real git over a real clone; the one shim is a ``git`` on PATH that makes ``git grep`` hang
(the stand-in for a pathological pattern over a huge tree), so a dropped request can be
seen to leave, or not leave, a process behind.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from fixtures import fake_github

from relore.contract.version import __version__
from relore.lens import engine
from relore.serve.app import Settings, create_app
from relore.serve.clone import git, symbol
from relore.serve.errors import Unavailable

DOWN_URL = "postgresql://relore_reader@/relore?host=/nonexistent-relore-socket-dir"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def clone(tmp_path, monkeypatch) -> Path:
    """$RELORE_CLONES_DIR/acme/widgets: 40 Python files that all mention the names asked."""
    where = tmp_path / "clones" / "acme" / "widgets"
    (where / "pkg").mkdir(parents=True)
    for i in range(40):
        body = "".join(f"def target_{k}(x):\n    return x + {i}\n\n" for k in range(6))
        (where / "pkg" / f"m{i:02d}.py").write_text(body)
    _git(where, "init", "-q", "-b", "main")
    _git(where, "add", ".")
    _git(where, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "-m", "init")
    monkeypatch.setenv("RELORE_CLONES_DIR", str(tmp_path / "clones"))
    monkeypatch.setenv("RELORE_CODE_CACHE", str(tmp_path / "code-cache"))
    return where


class SlowParses:
    """Every parse (engine.extract, and extract_names: a name's rows alone, what ``defs``
    parses for), slowed down, counting calls and how many run at once."""

    def __init__(self, monkeypatch, delay: float):
        self.delay = delay
        self.calls = 0
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()
        for name in ("extract", "extract_names"):
            monkeypatch.setattr(engine, name, self._slowed(getattr(engine, name)))

    def _slowed(self, real):
        def parse(*args):
            with self.lock:
                self.calls += 1
                self.running += 1
                self.most = max(self.most, self.running)
            try:
                time.sleep(self.delay)
                return real(*args)
            finally:
                with self.lock:
                    self.running -= 1

        return parse


def _symbol_request(name: str) -> dict:
    return {"repo": "acme/widgets", "name": name, "path": None, "limit": 20}


def test_symbol_parsing_stops_at_its_deadline_not_after_the_503(clone, monkeypatch):
    parses = SlowParses(monkeypatch, delay=0.1)  # 40 files: 4 s of parsing
    monkeypatch.setattr(symbol, "SYMBOL_TIMEOUT_S", 0.8)

    async def attempt():
        with pytest.raises(Unavailable, match="narrow it"):
            await symbol.symbol(_symbol_request("target_0"), clone)
        return parses.calls  # counted as the 503 goes out

    at_answer = asyncio.run(attempt())  # (asyncio.run also waits for its executor's threads)
    time.sleep(0.5)
    assert parses.running == 0, "a parse thread still runs after the answer"
    assert parses.calls <= at_answer + 1, (
        f"{parses.calls - at_answer} files parsed after the 503 ({at_answer} before it)"
    )


def test_concurrent_symbol_requests_parse_under_a_cap(clone, monkeypatch):
    parses = SlowParses(monkeypatch, delay=0.02)

    async def burst():
        names = [f"target_{k}" for k in range(6)]
        return await asyncio.gather(
            *(symbol.symbol(_symbol_request(n), clone) for n in names), return_exceptions=True
        )

    pages = asyncio.run(burst())
    answered = [p for p in pages if isinstance(p, dict)]
    assert answered, pages
    assert parses.most <= symbol.SYMBOL_CONCURRENT, f"{parses.most} parses ran at once"


def test_waiting_for_a_git_slot_counts_against_the_deadline(clone):
    async def attempt():
        slots = git._semaphore()
        for _ in range(git.CONCURRENT):
            await slots.acquire()  # every slot held by other requests
        runner = git.Git(clone, git.Budget(deadline_s=0.5, call_timeout_s=0.5))
        started = time.monotonic()
        with pytest.raises(git.GitTimeout):
            await asyncio.wait_for(runner.run(["rev-parse", "HEAD"], what="git rev-parse"), 5)
        return time.monotonic() - started, runner.budget.report()

    elapsed, budget = asyncio.run(attempt())
    assert elapsed < 2, f"waited {elapsed:.1f}s for a slot past a 0.5 s deadline"
    assert any("slot" in note for note in budget["timed_out"]), budget


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        # a process exiting while its stat is read answers ESRCH, not ENOENT
        return False
    return state != "Z"


def test_a_client_that_disconnects_takes_its_git_process_with_it(clone, tmp_path, monkeypatch):
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    pid_file = tmp_path / "grep.pid"
    real_git = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    shim = shim_dir / "git"
    shim.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = grep ] && { echo $$ > '
        + str(pid_file)
        + "; exec sleep 60; }; done\n"
        f'exec {real_git} "$@"\n'
    )
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    with fake_github.serve(create_app(Settings(DOWN_URL))) as base:
        host, port = base.removeprefix("http://").split(":")
        sock = socket.create_connection((host, int(port)))
        sock.sendall(
            f"GET /api/v1/code/grep?repo=acme/widgets&pattern=target HTTP/1.1\r\n"
            f"Host: {host}:{port}\r\nx-relore-client: {__version__}\r\n\r\n".encode()
        )
        deadline = time.monotonic() + 10
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        sock.close()  # the agent gave up
        deadline = time.monotonic() + 3
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        still = _alive(pid)
        if still:
            os.kill(pid, 9)
    assert not still, "git grep ran on after its client disconnected"
