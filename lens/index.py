"""The caller's tree (``listing.py``) read: files → records (parsed or cached) → ``map``/``defs``/``refs``.

Each verb returns a page dict that ``contract/render/`` prints and ``--json`` mirrors field for
field. Every page says what it did not read (too large, binary, no grammar, syntax errors
read with recovery) and every capped list says ``returned`` of ``total``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import marshal
import os
import stat
from collections import Counter, namedtuple
from collections.abc import Iterator

from relore.lens import DEFS_CAP, MAP_CAP, REFS_CAP, cache, engine, records, registry
from relore.lens.confine import Beneath, OutOfTree, PathNotFound, resolve
from relore.lens.listing import Tree, walk
from relore.lens.providers.base import GrammarUnavailable

__all__ = ["OutOfTree", "PathNotFound", "Tree", "defs", "refs", "repo_map", "scan", "walk"]

MAX_FILE_BYTES = 1_000_000

# fewer files to read than this are read in this process: forking costs more than it saves
POOL_MIN_FILES = 64
# files a worker is handed at once: fewer cost more round trips, more leave one worker
# busy at the end while the others wait
CHUNK_FILES = 64
# the cache's name for "holds the name but defines none of it" (a space: no identifier has one)
UNDEFINED = "defines no "
LOCATIONS_PER_NAME = 3
# a file re-read for one more name than this keeps every name's rows (a whole record), not
# only the names asked of it
SCOPED_NAMES = 8
# a name's places cost a scoped record about 16 µs each (two small queries), a whole
# record about 1.4 parses more than the parse: past one place in this many bytes (some
# 11,000 a megabyte, where ``self`` is one in 340 bytes) the whole record is the cheaper
DENSE_BYTES = 100
TEXT_CHARS = 200


# (collections' namedtuple, not typing's: typing stays unimported, a cached answer's start
# counts)
class Read(namedtuple("Read", "has_error definitions counts occurrences exports", defaults=[None])):
    """One source file as the verbs read it: ``has_error`` (bool), ``definitions`` (list);
    ``counts`` for ``map`` (name -> (bare references, references through an object)),
    ``occurrences`` (of the name asked, or all) for ``refs``, None when not asked for;
    ``exports``, what it declares public (``Provider.exports``), None by default."""

    __slots__ = ()


class Scan(namedtuple("Scan", "tree records files definitions")):
    """``tree`` (``Tree``), ``records`` ([(relative path, language, ``Read``)]), ``files``
    (the page's counts) and ``definitions``: (relative path, language) -> the file's
    definitions, for a record read without them."""

    __slots__ = ()


class Stopped(RuntimeError):
    """The caller's ``stop`` said stop (the daemon's deadline passed) before the scan ended."""


# the bytes of an ASCII identifier: a whole word's neighbours are none of these
_IDENTIFIER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _holds(data: bytes, name: str) -> bool:
    """Whether ``data`` holds ``name`` as a whole word: an identifier ``parse`` never sits
    next to another identifier character, so ``parser`` and ``urlparse`` do not count. A
    non-ASCII name (a neighbour could be a letter) only needs its bytes. By ``bytes.find``:
    sre searches a pattern that opens with a lookbehind byte by byte (7x slower here)."""
    needle = name.encode("utf-8")
    if not name.isascii():
        return needle in data
    ident, width, size = _IDENTIFIER, len(needle), len(data)
    at = data.find(needle)
    while at >= 0:
        after = at + width
        if (at == 0 or data[at - 1] not in ident) and (after >= size or data[after] not in ident):
            return True
        at = data.find(needle, at + 1)
    return False


@functools.lru_cache(maxsize=16)
def _definition(language: str, name: str):
    return registry.by_name(language).definition_pattern(name)


def _read_source(job: tuple[str, str, str | None, bool, tuple | None], beneath: Beneath) -> tuple:
    """Read one file (through ``beneath``: never a link) and parse it unless it is binary
    or cannot hold the name. Runs in a worker process, so it returns bytes: the record's
    three blobs as the cache stores them, the names it holds, and the names it covers:
    ``covers`` (from the job) when only those names' rows were found
    (``engine.extract_names``), None for a whole record. A file is read with ``os.read``:
    half the cost of ``open().read()``, which counts when a cold scan reads every file of a
    tree for a name."""
    full, language, name, defining, covers = job
    try:
        data = beneath.read(full)[0]
    except OSError:
        return ("missing",)
    if b"\0" in data[:8192]:
        return ("binary",)
    if name is not None:
        if not _holds(data, name):
            return ("without",)
        definition = _definition(language, name) if defining else None
        if definition is not None and not definition.search(data):
            return ("undefined",)  # uses the name, defines none of it: not absent
    if covers is not None and DENSE_BYTES * sum(data.count(n.encode()) for n in covers) > len(data):
        covers = None
    try:
        provider = registry.by_name(language)
        if covers is None:
            record = engine.extract(provider, data)
        else:
            record = engine.extract_names(provider, data, covers)
    except GrammarUnavailable as exc:
        return ("no_grammar", str(exc))
    return ("parsed", records.blobs(record, counted=covers is None), list(record[2]), covers)


def _largest_first(todo: list) -> None:
    """The files to read, largest first (the records are sorted by path after): workers
    take them in chunks as they finish one, so the last chunks are small files and no
    worker is left parsing a large one while the others wait."""
    todo.sort(key=lambda item: -item[2].st_size)


def _covers(name: str | None, before: tuple) -> tuple | None:
    """The names a file read for ``name`` gets rows for: ``name`` and those its scoped
    record held (``before``); None (every name: a whole record) for ``map``, for a name
    ``engine.extract_names`` cannot find by its bytes, and past ``SCOPED_NAMES``."""
    if name is None or not engine.scopable(name):
        return None
    names = (name, *(n for n in before if n != name))
    return names if len(names) <= SCOPED_NAMES else None


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


def scan(
    path: str,
    env,
    name: str | None = None,
    cwd: str | None = None,
    stop=None,
    workers: int = 1,
    occurrences: bool = False,
    defining: bool = False,
    definitions: bool = True,
    within: str | None = None,
) -> Scan:
    """Read every source file under ``path``; with ``name``, only files that can hold it.
    Never through a symbolic link (``confine.py``): ``path`` reached through one, or outside
    ``within``, is refused (``OutOfTree``); a file that is a link is never read.

    A file whose bytes do not hold ``name`` as a whole word (with ``defining``: a
    definition of it, where the provider says how one is spelled) cannot give a row, so
    skipping it is exact, not a sample. A file whose ``stat`` (mtime, size, inode) matches
    the cache is not opened: its record comes from the cache, and with ``name`` only when
    the cache's name postings say it holds the name. Records carry definitions, plus
    reference counts without ``name`` (``map``) and the name's occurrences with
    ``occurrences`` (``refs``); with ``definitions`` False too, a record carries none
    (None: ``Scan.definitions`` loads a file's when asked). A file parsed for ``name`` is
    classified for that name alone (and those its cached record covered: ``_covers``),
    not for every identifier it holds, and cached as scoped to them: its definitions are
    then those around the name's places, what ``defs`` and ``refs`` of it read. ``stop`` (a
    callable) is asked before each file read; when it says True the scan ends with
    ``Stopped`` (nothing is saved to the cache).
    """
    usable = {p.name for p in registry.require_any()}
    with _collector_paused():
        tree = walk(path, cwd, env, within)
        store = cache.Store(env, tree.root)
        store.load()
        tally = _Tally(tree.other)
        _from_cache(tree, store, tally, usable, name, stop, occurrences, defining, definitions)
    counts, no_grammar, kept, todo = tally.counts, tally.no_grammar, tally.kept, tally.todo
    if workers > 1:
        _largest_first(todo)
    prefix = tree.prefix
    alone = _covers(name, ())  # a file with no scoped record (most): its name alone
    jobs = [
        (prefix + rel, lang, name, defining, _covers(name, before) if before else alone)
        for rel, lang, _st, before in todo
    ]
    used = [1]
    rows_only = name is not None and occurrences and not definitions
    beneath = Beneath(tree.root)
    for (rel, language, st, _b), result in zip(
        todo, _results(jobs, workers, stop, used, beneath), strict=True
    ):
        outcome = result[0]
        if outcome == "missing":
            counts["missing"] += 1
        elif outcome == "no_grammar":
            no_grammar[language] += 1
        elif outcome == "binary":
            store.put_binary(rel, st, language)
            counts["skipped_binary"] += 1
        elif outcome == "without":
            store.put_absent(rel, st, language, name)
            counts["without_name"] += 1
        elif outcome == "undefined":
            store.put_absent(rel, st, language, UNDEFINED + name)
            counts["without_definition"] += 1
        else:
            blobs, names, covers = result[1], result[2], result[3]
            store.put_record(rel, st, language, blobs, names, covers)
            counts["parsed"] += 1
            if rows_only:  # refs: the rows alone; a shown row's scope is loaded for it
                record = _rows_record(blobs[records.OCCURRENCES], name)
            else:
                head = marshal.loads(blobs[records.HEAD])
                extra = None
                if name is None:
                    extra = marshal.loads(blobs[records.COUNTS])
                elif occurrences:
                    extra = blobs[records.OCCURRENCES]
                record = _record(head, extra, name, occurrences)
            tally.keep(rel, language, record)
    kept.sort(key=lambda item: item[0])
    _prune(store, tree, tally.seen)
    store.save()
    if not kept and no_grammar and not counts["without_name"]:
        missing = ", ".join(f"{n} {lang}" for lang, n in sorted(no_grammar.items()))
        raise registry.GrammarMissing(
            f"this tree's source files ({missing} files) have no installed grammar: "
            f"install them with `{registry.INSTALL_LINE}`"
        )
    files = {
        "listing": tree.listing,
        "source_files": len(kept) + counts["without_name"] + counts["without_definition"],
        "read": len(kept),
        "parsed": counts["parsed"],
        "from_cache": counts["from_cache"],
        "without_name": counts["without_name"],
        "without_definition": counts["without_definition"],
        "syntax_errors": counts["syntax_errors"],
        "tangled_errors": counts["tangled_errors"],
        "skipped_large": counts["skipped_large"],
        "skipped_binary": counts["skipped_binary"],
        "no_grammar": dict(sorted(no_grammar.items())),
        "other_files": counts["other"],
        "skipped_dirs": len(tree.skipped_dirs),
        "skipped_dir_examples": tree.skipped_dirs[:5],
        "languages": dict(sorted(tally.languages.items())),
        "max_file_bytes": MAX_FILE_BYTES,
        "workers": used[-1],
        "cache": str(store.path),
    }
    return Scan(tree, kept, files, functools.partial(_definitions_of, store, prefix, beneath))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while the cache loads: its index and listings are tens of
    thousands of tuples and no cycle, which the collector would only walk, again and again
    (10-20 ms of a cached answer). Back on before any file is parsed."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


class _Tally:
    """What a scan found, file by file: the records it keeps, the files left to read (with
    their ``stat``), and its counts."""

    def __init__(self, other: int):
        self.counts: Counter[str] = Counter({"other": other})
        self.no_grammar: Counter[str] = Counter()
        self.languages: Counter[str] = Counter()
        self.kept: list[tuple[str, str, Read]] = []
        self.seen: set[str] = set()
        # (relative path, language, stat, the names its scoped record covers: or ())
        self.todo: list[tuple[str, str, os.stat_result, tuple]] = []

    def keep(self, rel: str, language: str, record: Read) -> None:
        self.languages[language] += 1
        if record.has_error == engine.TANGLED:
            self.counts["tangled_errors"] += 1
        elif record.has_error:
            self.counts["syntax_errors"] += 1
        self.kept.append((rel, language, record))


def _from_cache(
    tree: Tree,
    store: cache.Store,
    tally: _Tally,
    usable: set[str],
    name: str | None,
    stop,
    occurrences: bool,
    defining: bool,
    definitions: bool,
) -> None:
    """``stat`` every source file: keep the cached record of each unchanged one that can
    hold ``name``, and leave the rest to read (``tally.todo``). A record of some names
    alone (its ``cache.COVERS`` field) answers for those names only: for another it is read again
    (and covers both), unless that name's sift already found the file without it."""
    known = store.holders(name) if name is not None else None
    known_undefined = (
        store.holders(UNDEFINED + name)[1]
        if defining and name is not None and known is not None
        else set()
    )
    rows_only = name is not None and occurrences and not definitions
    holding, absent = known if known is not None else (None, set())
    todo, seen_add = tally.todo, tally.seen.add
    prefix, total = tree.prefix, len(tree.paths)
    # one pass of thousands of files: names held locally, counts kept in ints
    # lstat: a symbolic link (git lists them too) is not a regular file, so never read
    files_get, os_lstat, is_regular, large = store.files.get, os.lstat, stat.S_ISREG, MAX_FILE_BYTES
    binary, unparsed, covers_at = cache.BINARY, cache.UNPARSED, cache.COVERS
    missing = other = skipped_large = skipped_binary = without = undefined = 0
    for rel, language in zip(tree.paths, tree.languages, strict=True):
        if stop is not None and stop():
            raise Stopped(f"stopped after {len(tally.seen)} of {total} files")
        if language not in usable:
            tally.no_grammar[language] += 1
            continue
        try:
            st = os_lstat(prefix + rel)
        except OSError:
            missing += 1
            continue
        if not is_regular(st.st_mode):
            other += 1
            continue
        seen_add(rel)
        if st.st_size > large:
            skipped_large += 1
            continue
        entry = files_get(rel)  # ``Store.get``, inline
        if (
            entry is None
            or entry[0] != st.st_mtime_ns
            or entry[1] != st.st_size
            or entry[2] != st.st_ino
        ):
            todo.append((rel, language, st, ()))
            continue
        where = entry[5]
        if where == binary:
            skipped_binary += 1
            continue
        if where == unparsed:
            if entry[3] in absent:
                without += 1
            elif entry[3] in known_undefined:
                undefined += 1
            else:
                todo.append((rel, language, st, ()))
            continue
        covered = entry[covers_at] if len(entry) > covers_at else None
        if covered is not None and name not in covered:  # (map: a name of None)
            if name is not None and entry[3] in absent:
                without += 1
            elif entry[3] in known_undefined:
                undefined += 1
            else:
                todo.append((rel, language, st, covered))
            continue
        if holding is not None and entry[3] not in holding:
            without += 1
            continue
        if rows_only:
            record = _rows_record(store.blob(entry, records.OCCURRENCES), name)
        else:
            record = _cached_record(store, entry, name, occurrences)
        if record is None:  # the cache lost it: read it again
            todo.append((rel, language, st, covered or ()))
            continue
        tally.counts["from_cache"] += 1
        tally.keep(rel, language, record)
    tally.counts.update(
        missing=missing,
        other=other,
        skipped_large=skipped_large,
        skipped_binary=skipped_binary,
        without_name=without,
        without_definition=undefined,
    )


def _cached_record(store: cache.Store, entry: tuple, name: str | None, occurrences: bool):
    """A parsed file's record from the cache, with what the verb reads; None when lost."""
    head = store.part(entry, records.HEAD)
    extra = None
    if head is not None and name is None:
        extra = store.part(entry, records.COUNTS)
    elif head is not None and occurrences:
        extra = store.blob(entry, records.OCCURRENCES)
    if head is None or (extra is None and (name is None or occurrences)):
        return None
    return _record(head, extra, name, occurrences)


def _rows_record(blob: bytes | None, name: str) -> Read | None:
    """A record of ``name``'s occurrences alone (no definitions) from an ``OCCURRENCES``
    blob; None when lost."""
    found = records.occurrences(blob, name) if blob is not None else None
    if found is None:
        return None
    has_error, rows = found
    return Read(has_error, None, None, {name: rows} if rows else {})


def _record(head: tuple, extra, name: str | None, occurrences: bool) -> Read | None:
    if name is None:
        return Read(head[0], head[1], extra, None, head[2])
    if not occurrences:
        return Read(head[0], head[1], None, None, head[2])
    found = _rows_record(extra, name)
    return found._replace(definitions=head[1], exports=head[2]) if found is not None else None


def _definitions_of(
    store: cache.Store, prefix: str, beneath: Beneath, rel: str, language: str
) -> list:
    """A file's definitions for a record read without them: from the cache, else parsed
    again (its stat was checked by this scan)."""
    entry = store.files.get(rel)
    head = None
    if entry is not None and len(entry) > 6:
        head = store.part(entry, records.HEAD)
        store.close()
    if head is None:
        result = _read_source((prefix + rel, language, None, False, None), beneath)
        if result[0] != "parsed":
            return []
        head = marshal.loads(result[1][records.HEAD])
    return head[1]


def _prune(store: cache.Store, tree: Tree, seen: set[str]) -> None:
    """Forget cached files that are gone from the part of the tree just walked."""
    if tree.listing == "file":
        return
    prefix = os.path.relpath(tree.scope, tree.root)
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    store.forget([rel for rel in store.files.keys() - seen if rel.startswith(prefix)])


def _shown_document(tree: Tree, full: str) -> str:
    """A document the map read, as the caller would write it: beside the tree's files
    when inside its root, else the whole path (an installed distribution's METADATA)."""
    if os.path.commonpath([full, tree.root]) == tree.root:
        return _shown(tree, os.path.relpath(full, tree.root))
    return full


def _shown(tree: Tree, rel: str) -> str:
    if tree.listing == "file":
        return tree.shown
    full = os.path.join(tree.root, rel)
    return os.path.normpath(os.path.join(tree.shown, os.path.relpath(full, tree.scope)))


# Bytes of the characters where ``str.splitlines()`` ends a line besides "\n" (U+0085,
# U+2028 and U+2029 end in 0x85, 0xA8, 0xA9 as UTF-8). A file holding none of these bytes
# has the same lines split at b"\n" (a "\n" also ends any invalid sequence, so each line
# decodes alone as it does in the whole): only the lines shown are then decoded and built,
# not every line of every file shown. Each is looked for alone: one byte is a memchr.
_OTHER_BREAKS = tuple(bytes([b]) for b in b"\r\x0b\x0c\x1c\x1d\x1e\x85\xa8\xa9")


class _Lines:
    """Source lines of the returned rows only, read once per file: line N is the Nth of
    the file's text decoded as UTF-8 (errors replaced) and split by ``str.splitlines()``."""

    def __init__(self, root: str):
        self.root = root
        self.beneath = Beneath(root)
        # rel -> [lines split so far, the bytes not split yet (None: no more)]
        self.files: dict[str, list] = {}

    def __call__(self, rel: str, line: int) -> str:
        held = self.files.get(rel)
        if held is None:
            try:
                data = self.beneath.read(os.path.join(self.root, rel))[0]
            except OSError:
                data = b""
            if any(other in data for other in _OTHER_BREAKS):
                held = [data.decode("utf-8", "replace").splitlines(), None]
            else:
                held = [[], data]
            self.files[rel] = held
        lines, rest = held
        if rest is not None and len(lines) < line:
            need = line - len(lines)
            parts = rest.split(b"\n", need)
            held[1] = parts.pop() if len(parts) > need else None
            lines.extend(parts)
        # split at b"\n", a file ending in "\n" has one (empty) line more: "" past its end
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if type(text) is bytes:
            text = text.decode("utf-8", "replace")
        text = text.strip()
        return text if len(text) <= TEXT_CHARS else text[: TEXT_CHARS - 1] + "…"


def _page(verb: str, tree: Tree, limit: int, offset: int, total: int, returned: int) -> dict:
    return {
        "verb": verb,
        "path": tree.shown,
        "root": tree.root,
        "returned": returned,
        "total": total,
        "offset": offset,
        "limit": limit,
        "left_out": max(0, total - offset - returned),
        "skipped_before": min(offset, total),
    }


def defs(
    name: str,
    path: str,
    env,
    limit: int = DEFS_CAP,
    offset: int = 0,
    cwd=None,
    stop=None,
    workers: int = 1,
    within: str | None = None,
) -> dict:
    result = scan(
        path, env, name=name, cwd=cwd, stop=stop, workers=workers, defining=True, within=within
    )
    rows = [
        (rel, language, bool(record.has_error), d)
        for rel, language, record in result.records
        for d in record.definitions
        if d[0] == name
    ]
    rows.sort(key=lambda row: (row[0], row[3][3], row[3][4]))
    kinds = Counter(row[3][1] for row in rows)
    chosen = rows[offset : offset + limit]
    lines = _Lines(result.tree.root)
    page = _page("defs", result.tree, limit, offset, len(rows), len(chosen))
    page["name"] = name
    page["kinds"] = dict(kinds.most_common())
    page["definitions"] = [
        {
            "path": _shown(result.tree, rel),
            "line": d[3],
            "column": d[4],
            "kind": d[1],
            "name": d[0],
            "qualified": d[2],
            "scope": d[2].rpartition(".")[0],
            "language": language,
            "syntax_errors_in_file": has_error,
            "text": lines(rel, d[3]),
        }
        for rel, language, has_error, d in chosen
    ]
    page["files"] = result.files
    return page


def _enclosing(definitions: list, byte: int) -> str:
    best = None
    for d in definitions:
        if d[5] <= byte < d[6] and d[7] != byte and (best is None or d[5] >= best[5]):
            best = d
    return best[2] if best else ""


def refs(
    name: str,
    path: str,
    env,
    limit: int = REFS_CAP,
    offset: int = 0,
    kind: str | None = None,
    cwd=None,
    workers: int = 1,
    within: str | None = None,
) -> dict:
    result = scan(
        path,
        env,
        name=name,
        cwd=cwd,
        workers=workers,
        occurrences=True,
        definitions=False,
        within=within,
    )
    counts: Counter[str] = Counter()
    rows = []
    for rel, language, record in result.records:
        for occurrence in record.occurrences.get(name, ()):
            row_kind = engine.kind(occurrence[3])
            counts[row_kind] += 1
            if kind is None or row_kind == kind:
                rows.append((rel, language, record, occurrence, row_kind))
    rows.sort(key=lambda row: (row[4] != "definition", row[0], row[3][1], row[3][2]))
    chosen = rows[offset : offset + limit]
    lines = _Lines(result.tree.root)
    scopes: dict[str, list] = {}  # definitions of the files shown, loaded for them alone
    for rel, language, record, _occurrence, _kind in chosen:
        if rel not in scopes:
            scopes[rel] = (
                record.definitions
                if record.definitions is not None
                else result.definitions(rel, language)
            )
    page = _page("refs", result.tree, limit, offset, len(rows), len(chosen))
    page["name"] = name
    page["kind"] = kind
    page["counts"] = {k: counts.get(k, 0) for k in engine.KINDS}
    page["occurrences"] = sum(counts.values())
    page["references"] = [
        {
            "path": _shown(result.tree, rel),
            "line": occurrence[1],
            "column": occurrence[2],
            "kind": row_kind,
            "scope": _enclosing(scopes[rel], occurrence[0]),
            "language": language,
            "syntax_errors_in_file": bool(record.has_error),
            "text": lines(rel, occurrence[1]),
        }
        for rel, language, record, occurrence, row_kind in chosen
    ]
    page["files"] = result.files
    return page


def _focus(tree: Tree, focus: list[str], cwd: str | None, within: str | None) -> list[str]:
    """The caller's focus paths, relative to the tree's root ('dir/' for a directory):
    inside the tree mapped, reached through no symbolic link (``confine.resolve``)."""
    chosen = []
    for given in focus:
        full = resolve(given, cwd, within)
        if os.path.commonpath([full, tree.scope]) != tree.scope:
            raise PathNotFound(f"--focus {given} is not inside {tree.shown}")
        rel = os.path.relpath(full, tree.root).replace(os.sep, "/")
        rel = "" if rel == "." else rel
        chosen.append(rel + "/" if os.path.isdir(full) and rel else rel)
    return chosen


def repo_map(
    path: str,
    env,
    limit: int = MAP_CAP,
    offset: int = 0,
    cwd=None,
    focus: list[str] | None = None,
    workers: int = 1,
    within: str | None = None,
) -> dict:
    from relore.lens import docs, rank  # the map's alone

    result = scan(path, env, cwd=cwd, workers=workers, within=within)
    focused = _focus(result.tree, focus or [], cwd, within)
    documentation = docs.tree_documentation(result.tree, result.records, env)
    chosen, total, info = rank.rank(
        result.records, focused, offset=offset, limit=limit, documentation=documentation
    )
    page = _page("map", result.tree, limit, offset, total, len(chosen))
    page["score"] = rank.SCORE
    page["focus"] = list(focus or [])
    page["entry_files"] = [_shown(result.tree, rel) for rel in info["entry_files"]]
    page["declared"] = info["declared"]
    page["documentation"] = dict(
        info["documentation"],
        documents=[_shown_document(result.tree, d) for d in info["documentation"]["documents"]],
    )
    page["dunders_excluded"] = info["dunders"]
    page["everywhere_excluded"] = info["everywhere"]
    page["entries"] = [
        {
            "name": e["name"],
            "score": round(e["score"], 3),
            "referenced_from": e["referenced_from"],
            "references": e["references"],
            "definitions": e["definitions"],
            "documented": e["documented"],
            "kinds": dict(Counter(d[1] for _rel, d in e["places"]).most_common()),
            "locations": [
                {
                    "path": _shown(result.tree, rel),
                    "line": d[3],
                    "kind": d[1],
                    "qualified": d[2],
                }
                for rel, d in e["places"][:LOCATIONS_PER_NAME]
            ],
        }
        for e in chosen
    ]
    page["files"] = result.files
    return page
