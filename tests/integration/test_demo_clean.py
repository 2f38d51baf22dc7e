"""`make clean` stops the demo's daemon before it removes the home (#37 item 2).

It used to remove `.relore` (and the daemon's pid file in it) with `relored serve` still
running: the next `make demo` found port 8080 taken, moved to another, and a user on the
default `RELORE_API` talked to the orphan. Here the daemon is started as `deploy/local/demo.sh`
starts it (`nohup relored serve --port P &`, its pid in `$RELORE_HOME/serve.pid`) in a copy of
the checkout's Makefile and `deploy/local/`, and that copy's `make clean` is run.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from fixtures import daemon as daemons

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _checkout(tmp_path: Path) -> Path:
    """The Makefile and deploy/local/ of this checkout, in a directory `make clean` may empty."""
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "deploy" / "local", copy / "deploy" / "local")
    shutil.copy(ROOT / "Makefile", copy / "Makefile")
    return copy


def _start_as_the_demo_does(checkout: Path, env: dict, port: int) -> int:
    home = checkout / ".relore"
    (home / "demo").mkdir(parents=True)
    script = (
        f'nohup relored serve --port {port} >"$RELORE_HOME/demo/serve.log" 2>&1 &\n'
        'echo $! >"$RELORE_HOME/serve.pid"\n'
    )
    subprocess.run(["bash", "-c", script], cwd=checkout, env={**env, "RELORE_HOME": str(home)},
                   check=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return int((home / "serve.pid").read_text())
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError((home / "demo" / "serve.log").read_text()[-2000:])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_make_clean_stops_the_demos_daemon_before_removing_its_home(db_url, tmp_path):
    checkout = _checkout(tmp_path)
    env = {
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "RELORE_DATABASE_URL": db_url,
        "PGPASSFILE": os.environ.get("PGPASSFILE", str(tmp_path / "pgpass")),
    }
    port = daemons.free_port()
    pid = _start_as_the_demo_does(checkout, env, port)
    try:
        done = subprocess.run(
            ["make", "clean"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        for _ in range(100):  # the daemon is not this process's child: it is reaped elsewhere
            if not _alive(pid) or _zombie(pid):
                break
            time.sleep(0.1)
        assert not _alive(pid) or _zombie(pid), f"make clean left relored serve (pid {pid})"
        assert _port_free(port), "the daemon's port is still taken"
        assert not (checkout / ".relore").exists()
        assert f"pid {pid}" in done.stdout, done.stdout
    finally:
        if _alive(pid) and not _zombie(pid):
            os.kill(pid, 9)


def test_make_clean_with_no_demo_running_or_a_stale_pid_file_still_cleans(db_url, tmp_path):
    checkout = _checkout(tmp_path)
    home = checkout / ".relore"
    home.mkdir()
    # a pid the system gave to another process since: never killed
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        (home / "serve.pid").write_text(f"{sleeper.pid}\n")
        env = {"PATH": f"{BIN}:{os.environ['PATH']}", "HOME": str(tmp_path),
               "RELORE_DATABASE_URL": db_url}  # fmt: skip
        done = subprocess.run(
            ["make", "clean"], cwd=checkout, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        assert sleeper.poll() is None, "make clean killed a process that is not the demo's"
        assert not home.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, IndexError):
        return False
