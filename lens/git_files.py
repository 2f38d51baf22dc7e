"""What git says of a tree: its top level, ``git ls-files`` (tracked and untracked,
ignored left out) and ``git check-ignore``, each run with a deadline and read whole or not
at all."""

from __future__ import annotations

import os
import time

GIT_LS_FILES = (
    "git",
    "-C",
    "ls-files",
    "-z",
    "--full-name",
    "--cached",
    "--others",
    "--exclude-standard",
    "--deduplicate",
)


def _git_root(path: str) -> str | None:
    current = path
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _git_files(scope: str) -> list[str] | None:
    output = _output_of([*GIT_LS_FILES[:2], scope, *GIT_LS_FILES[2:]], timeout=60)
    if output is None:
        return None  # not ours to fix (no git, dubious ownership): fall back to a walk
    names = output.decode("utf-8", "surrogateescape").split("\0")
    return sorted(n for n in names if n)


def _output_of(argv: list[str], timeout: float) -> bytes | None:
    """``argv``'s standard output when it exits 0 within ``timeout``, run with no input
    and its errors dropped; None when it cannot run, fails or outlives ``timeout`` (then it
    is killed). A spawn, a pipe and a wait: importing ``subprocess`` (~9 ms) cost a cached
    answer under git more than git's run."""
    if not hasattr(os, "posix_spawnp"):
        import subprocess

        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None
    import select

    deadline = time.monotonic() + timeout
    reading, writing = os.pipe()  # neither inherited: the child's stdout is a dup2
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, writing, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    except OSError:
        os.close(reading)
        return None
    finally:
        os.close(writing)
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([reading], [], [], left)[0]:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return None
            chunk = os.read(reading, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reading)
    if not _exited_within(pid, max(0.0, deadline - time.monotonic())):
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return None
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return b"".join(chunks) if status == 0 else None


def _exit_status(argv: list[str], timeout: float) -> int | None:
    """``argv``'s exit status, run with no input and its output dropped; None when it
    cannot run or outlives ``timeout`` (then it is killed). A spawn and a wait: the
    ``subprocess`` module's import alone costs a cached answer more than git's run."""
    return _started(argv, timeout)()


def _started(argv: list[str], timeout: float):
    """``argv`` started as ``_exit_status`` runs it; returns what waits for its exit status
    (call it once), so the caller can work while it runs."""
    if not hasattr(os, "posix_spawnp"):
        import subprocess

        try:
            status = subprocess.run(
                argv, capture_output=True, timeout=timeout, check=False
            ).returncode
        except (OSError, subprocess.SubprocessError):
            status = None
        return lambda: status
    quiet = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=quiet)
    except OSError:
        return lambda: None

    def status() -> int | None:
        if _exited_within(pid, timeout):
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return None

    return status


def _exited_within(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` exits within ``timeout`` (not reaped): a wait on its pidfd
    where there is one (Linux), else polls."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        handle = None
    if handle is not None:
        import select

        try:
            return bool(select.select([handle], [], [], timeout)[0])
        finally:
            os.close(handle)
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def _git_ignored(scope: str, root: str) -> bool:
    """A path the caller named inside an ignored directory is walked, not listed by git
    (which would list nothing there)."""
    return _asking_ignored(scope, root)()


def _asking_ignored(scope: str, root: str):
    """``_git_ignored`` asked of git now; returns what waits for the answer (call it once)."""
    if scope == root:
        return lambda: False
    argv = ["git", "-C", root, "check-ignore", "-q", "--", os.path.relpath(scope, root)]
    status = _started(argv, timeout=30)
    return lambda: status() == 0
