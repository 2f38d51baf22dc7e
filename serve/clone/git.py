"""Running git against a working clone, under a budget the answer reports.

Every answer from a clone is bounded: a deadline for the whole request, a timeout per call,
a cap on the expensive history walks (``git log -S`` reads every diff of a path's history),
and a cap on the output kept. A call that hits any of them is reported in the answer's
``budget``, never silently shortened. At most ``CONCURRENT`` git processes run at once per
daemon, so a burst of requests queues instead of forking without limit; the wait for a slot
counts against the request's deadline, and a cancelled request (its client went away)
kills its git process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CONCURRENT = 4
KEEP_BYTES = 2_000_000
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
    # the clone is complete: a missing object is an error, never a network fetch
    "GIT_NO_LAZY_FETCH": "1",
    # read-only: never take the index lock `relored clone` may be holding
    "GIT_OPTIONAL_LOCKS": "0",
    # a caller's path is a path, never pathspec magic (`:(glob)`, `:!x`)
    "GIT_LITERAL_PATHSPECS": "1",
    "GIT_CONFIG_NOSYSTEM": "1",
}
_slots: asyncio.Semaphore | None = None
_slots_loop: asyncio.AbstractEventLoop | None = None


def _semaphore() -> asyncio.Semaphore:
    global _slots, _slots_loop
    loop = asyncio.get_running_loop()
    if _slots is None or _slots_loop is not loop:
        _slots, _slots_loop = asyncio.Semaphore(CONCURRENT), loop
    return _slots


class GitFailed(RuntimeError):
    def __init__(self, args: list[str], returncode: int, stderr: str):
        self.returncode = returncode
        self.stderr = stderr.strip()
        said = self.stderr.splitlines()[-1] if self.stderr else f"exit {returncode}"
        super().__init__(f"git {args[0]}: {said}")


class GitTimeout(RuntimeError):
    pass


class BudgetSpent(RuntimeError):
    pass


@dataclass
class Budget:
    """What one request may spend, and what it did spend (``report()`` goes in the answer)."""

    deadline_s: float = 30.0
    call_timeout_s: float = 15.0
    max_pickaxe_walks: int = 3
    started: float = field(default_factory=time.monotonic)
    subprocesses: int = 0
    history_walks: int = 0
    pickaxe_walks: int = 0
    timed_out: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def remaining(self) -> float:
        return self.deadline_s - (time.monotonic() - self.started)

    def pickaxe_left(self) -> int:
        return self.max_pickaxe_walks - self.pickaxe_walks

    def report(self) -> dict:
        return {
            "subprocesses": self.subprocesses,
            "history_walks": self.history_walks,
            "pickaxe_walks": self.pickaxe_walks,
            "max_pickaxe_walks": self.max_pickaxe_walks,
            "deadline_s": self.deadline_s,
            "call_timeout_s": self.call_timeout_s,
            "elapsed_ms": int((time.monotonic() - self.started) * 1000),
            "timed_out": list(self.timed_out),
            "notes": list(self.notes),
        }


@dataclass
class Output:
    text: str
    lines: int  # ``count`` bytes (newlines unless asked) in the output read, kept or not
    complete: bool  # False: more than keep_bytes came and the rest was only counted
    stopped: bool = False  # True: ended at stop_after_bytes, so ``lines`` is a lower bound


class Git:
    def __init__(self, clone: Path, budget: Budget):
        self.clone = clone
        self.budget = budget
        self.env = {**os.environ, **_GIT_ENV}

    async def run(
        self,
        args: list[str],
        *,
        what: str,
        walk: str | None = None,
        ok_codes: tuple[int, ...] = (0,),
        keep_bytes: int = KEEP_BYTES,
        stop_after_bytes: int | None = None,
        count: bytes = b"\n",
        sink: Callable[[bytes], None] | None = None,
    ) -> Output:
        """``git args`` in the clone. ``walk`` is ``"history"`` or ``"pickaxe"`` for a
        history walk (the pickaxe kind is capped); ``stop_after_bytes`` ends the process
        once that much output has come (its total is then a lower bound). ``count`` is the
        byte ``Output.lines`` counts: a NUL for ``-z`` output, whose paths may hold newlines.
        ``sink`` takes the first ``keep_bytes`` of the output chunk by chunk as it comes
        (``grep_records.Splitter.feed``: linear, bounded per chunk) instead of their being
        kept: ``Output.text`` is then empty."""
        if walk == "pickaxe" and self.budget.pickaxe_left() <= 0:
            raise BudgetSpent(f"{what}: the pickaxe budget is spent")
        if self.budget.remaining() <= 0.05:
            self.budget.timed_out.append(f"{what}: not run, the request's deadline had passed")
            raise GitTimeout(what)
        slots = _semaphore()
        waited = time.monotonic()
        try:  # the wait for a slot is part of the request's deadline
            await asyncio.wait_for(slots.acquire(), max(self.budget.remaining(), 0))
        except TimeoutError:
            self.budget.timed_out.append(
                f"{what}: not run, no git slot came free in "
                f"{time.monotonic() - waited:.1f}s, before the request's deadline"
            )
            raise GitTimeout(what) from None
        try:
            timeout = min(self.budget.call_timeout_s, self.budget.remaining())
            if timeout <= 0.05:
                self.budget.timed_out.append(f"{what}: not run, the request's deadline had passed")
                raise GitTimeout(what)
            command = ["git", "-c", f"safe.directory={self.clone}", "-C", str(self.clone), *args]
            self.budget.subprocesses += 1
            if walk:
                self.budget.history_walks += 1
            if walk == "pickaxe":
                self.budget.pickaxe_walks += 1
            proc = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                start_new_session=True,  # its own process group: a kill takes its children
            )
            try:
                kept, lines, complete, stopped, stderr = await asyncio.wait_for(
                    self._collect(proc, keep_bytes, stop_after_bytes, count, sink), timeout
                )
            except TimeoutError:
                _kill(proc)
                await proc.wait()
                self.budget.timed_out.append(f"{what}: stopped after {timeout:.1f}s")
                raise GitTimeout(what) from None
            except BaseException:  # cancelled: the client went away, or the daemon stops
                _kill(proc)
                raise
        finally:
            slots.release()
        if proc.returncode not in ok_codes and not stopped:
            raise GitFailed(args, proc.returncode or 0, stderr)
        return Output(kept.decode("utf-8", "replace"), lines, complete, stopped)

    @staticmethod
    async def _collect(
        proc, keep_bytes: int, stop_after_bytes: int | None, count: bytes, sink=None
    ):
        kept = bytearray()
        lines = 0
        seen = 0
        complete = True
        stopped = False
        err_task = asyncio.ensure_future(proc.stderr.read())
        while True:
            chunk = await proc.stdout.read(65_536)
            if not chunk:
                break
            room = keep_bytes - seen
            seen += len(chunk)
            lines += chunk.count(count)
            if room > 0:
                if sink is not None:
                    sink(chunk[:room])
                else:
                    kept.extend(chunk[:room])
            if seen > keep_bytes:
                complete = False
            if stop_after_bytes is not None and seen >= stop_after_bytes:
                stopped = True
                _kill(proc)
                break
        await proc.wait()
        stderr = (await err_task)[-8000:].decode("utf-8", "replace")
        return bytes(kept), lines, complete, stopped, stderr


def _kill(proc) -> None:
    """The process and anything it started (a hook, an alias, a pager)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
