"""The lens's worker processes: forked, each handed chunks of files over a pipe and
answering with what ``_read_source`` made of them (no ``concurrent.futures``: the pool's
import and start cost more than a cached answer). A worker that dies leaves its files to
this process; ``stop`` ends every worker. Under ``POOL_MIN_FILES`` files, no fork."""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Iterator

from relore.lens import registry
from relore.lens.confine import Beneath
from relore.lens.providers.base import GrammarUnavailable
from relore.lens.sourcefile import _read_source

# fewer files to read than this are read in this process: forking costs more than it saves
POOL_MIN_FILES = 64
# files a worker is handed at once: fewer cost more round trips, more leave one worker
# busy at the end while the others wait
CHUNK_FILES = 64


class Stopped(RuntimeError):
    """The caller's ``stop`` said stop (the daemon's deadline passed) before the scan ended."""


def workers_for(env) -> int:
    """Processes a CLI scan may use: ``RELORE_CODE_WORKERS``, else every core it may run on."""
    try:
        wanted = int(env.get("RELORE_CODE_WORKERS") or 0)
    except ValueError:
        wanted = 0
    if wanted > 0:
        return wanted
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _forks(workers: int, jobs: int) -> bool:
    return workers > 1 and jobs >= POOL_MIN_FILES and hasattr(os, "fork")


def _results(jobs: list, workers: int, stop, used: list[int], beneath: Beneath) -> Iterator[tuple]:
    """``_read_source`` over ``jobs``, in order (``used`` gets the processes that read
    them). With a name, each worker reads and sifts its own files and parses those that
    can hold the name as it finds them: the parse starts with the first file, not after a
    pass over every file here."""
    used.append(workers if _forks(workers, len(jobs)) else 1)
    yield from _parsed(jobs, workers, stop, beneath)


def _parsed(jobs: list, workers: int, stop, beneath: Beneath) -> Iterator[tuple]:
    """``_read_source`` over ``jobs``, in order: in this process, or on ``workers`` forked
    processes when there is enough to share. tree-sitter's parse releases the GIL, but its
    queries and the record building hold it, so threads would not scale. Only a
    single-threaded caller (the CLI) forks; the daemon passes ``workers=1``."""
    if not _forks(workers, len(jobs)):
        for done, job in enumerate(jobs):
            if stop is not None and stop():
                raise Stopped(f"stopped after {done} of {len(jobs)} files to read")
            yield _read_source(job, beneath)
        return
    if jobs[0][2] is None:  # every file parsed (map): loaded once here, not in each worker
        for language in {job[1] for job in jobs}:
            with contextlib.suppress(GrammarUnavailable):
                registry.by_name(language).load()
    chunk = max(1, min(CHUNK_FILES, len(jobs) // (workers * 8)))
    chunks = [jobs[at : at + chunk] for at in range(0, len(jobs), chunk)]
    pool = _Pool(min(workers, len(chunks)), beneath)
    done = 0
    try:
        for result in pool.run(chunks):
            if stop is not None and stop():
                raise Stopped(f"stopped after {done} of {len(jobs)} files to read")
            done += 1
            yield result
    except _Broken:
        # a worker died (killed, out of memory): finish here, where an error is visible
        yield from _parsed(jobs[done:], 1, stop, beneath)
    finally:
        pool.close()


class _Broken(Exception):
    """A worker process ended before answering."""


def _send(fd: int, payload: bytes) -> None:
    view = memoryview(len(payload).to_bytes(8, "little") + payload)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> bytes | None:
    """One message, None at the end of the pipe (before any byte of one)."""
    head = _exactly(fd, 8)
    return None if head is None else _exactly(fd, int.from_bytes(head, "little"))


def _exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            if left == size:
                return None
            raise _Broken("a message cut short")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class _Pool:
    """Forked workers, each handed a chunk of jobs at a time over a pipe and answering
    with its results, marshalled (jobs and results are plain tuples, bytes and strings):
    nothing imported for it (``concurrent.futures`` and ``multiprocessing`` cost a cold
    answer 40-100 ms) and no thread beside this one. A worker is handed its next chunk
    while it works on one, when the chunk is small enough to wait in the pipe."""

    PREFETCH_BYTES = 16_384  # below a pipe's buffer: a write that never waits on a busy worker

    def __init__(self, workers: int, beneath: Beneath):
        self.children: list[tuple[int, int, int]] = []  # (pid, its jobs fd, its results fd)
        for _ in range(workers):
            jobs_r, jobs_w = os.pipe()
            results_r, results_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                for _pid, theirs_w, theirs_r in self.children:
                    os.close(theirs_w)  # another worker's pipes: its ends stay its own
                    os.close(theirs_r)
                os.close(jobs_w)
                os.close(results_r)
                _work(jobs_r, results_w, beneath)
            os.close(jobs_r)
            os.close(results_w)
            self.children.append((pid, jobs_w, results_r))

    def run(self, chunks: list[list]) -> Iterator[tuple]:
        """Every result, in the chunks' order. Before each, what any worker has finished
        is taken in: a worker whose answer waited in its pipe while this process used the
        one before it would wait idle (a chunk of large files answers megabytes)."""
        import select  # (a built-in module: no cost)

        pending = list(reversed(range(len(chunks))))  # the next chunk to hand out: last
        handed: dict[int, list[int]] = {fd: [] for _pid, _w, fd in self.children}
        writer = {fd: w for _pid, w, fd in self.children}
        finished: dict[int, list] = {}
        ready = 0

        def hand(fd: int) -> None:
            while pending and len(handed[fd]) < 2:
                payload = marshal.dumps(chunks[pending[-1]])
                if handed[fd] and len(payload) > self.PREFETCH_BYTES:
                    return  # waits for the worker to be idle
                handed[fd].append(pending.pop())
                try:
                    _send(writer[fd], payload)
                except OSError:  # (a pipe whose worker is gone)
                    raise _Broken("a worker ended") from None

        def take_in(wait: float | None) -> None:
            busy = [fd for fd, queue in handed.items() if queue]
            if not busy:  # all answered; waiting on none would wait for ever
                if wait is None:
                    raise _Broken("no worker holds the chunk awaited")
                return
            for fd in select.select(busy, [], [], wait)[0]:
                message = _receive(fd)
                if message is None:
                    raise _Broken("a worker ended")
                finished[handed[fd].pop(0)] = marshal.loads(message)
                hand(fd)

        for fd in handed:
            hand(fd)
        while ready < len(chunks):
            if ready not in finished:
                take_in(None)
                continue
            for result in finished.pop(ready):
                take_in(0)
                yield result
            ready += 1

    def close(self) -> None:
        for pid, jobs_w, results_r in self.children:
            for fd in (jobs_w, results_r):
                with contextlib.suppress(OSError):
                    os.close(fd)
            with contextlib.suppress(OSError):
                os.kill(pid, 9)  # done or stopped: nothing of its is waited for
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        self.children = []


def _work(jobs_r: int, results_w: int, beneath: Beneath) -> None:
    """A worker's life: read chunks until the pipe ends, answer each; then leave without
    running any of the parent's exit handlers."""
    status = 1
    try:
        while (message := _receive(jobs_r)) is not None:
            chunk = marshal.loads(message)
            _send(results_w, marshal.dumps([_read_source(job, beneath) for job in chunk]))
        status = 0
    finally:
        os._exit(status)
