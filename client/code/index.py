"""The caller's tree (``listing.py``) read: files → records (parsed or cached) → ``map``/``defs``/``refs``.

Each verb returns a page dict that ``render.py`` prints and ``--json`` mirrors field for
field. Every page says what it did not read (too large, binary, no grammar, syntax errors
read with recovery) and every capped list says ``returned`` of ``total``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import marshal
import os
import re
import stat
from collections import Counter, namedtuple
from collections.abc import Iterator

from relore.client.code import DEFS_CAP, MAP_CAP, REFS_CAP, cache, engine, records, registry
from relore.client.code.listing import PathNotFound, Tree, walk
from relore.client.code.providers.base import GrammarUnavailable

__all__ = ["PathNotFound", "Tree", "defs", "refs", "repo_map", "scan", "walk"]

MAX_FILE_BYTES = 1_000_000

# fewer files to read than this are read in this process: forking costs more than it saves
POOL_MIN_FILES = 64
# the cache's name for "holds the name but defines none of it" (a space: no identifier has one)
UNDEFINED = "defines no "
LOCATIONS_PER_NAME = 3
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


@functools.lru_cache(maxsize=16)
def _word(name: str):
    """``name`` as a whole word: an identifier ``parse`` never sits next to another
    identifier character, so ``parser`` and ``urlparse`` do not count. None for a
    non-ASCII name (a neighbour could be a letter): then only the bytes are tested."""
    if not name.isascii():
        return None
    return re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")


@functools.lru_cache(maxsize=16)
def _definition(language: str, name: str):
    return registry.by_name(language).definition_pattern(name)


def _read_bytes(full: str) -> bytes:
    """A file's bytes, read with ``os.read``: half the cost of ``open().read()``, which
    counts when a cold scan reads every file of a tree for a name."""
    handle = os.open(full, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(handle)


def _read_source(job: tuple[str, str, str | None, bool], parse: bool = True) -> tuple:
    """Read one file and parse it unless it is binary or cannot hold the name (``parse``
    False: ``("parse",)`` where it would parse). Runs in a worker process, so it returns
    bytes: the record's three blobs as the cache stores them, and the names it holds."""
    full, language, name, defining = job
    try:
        data = _read_bytes(full)
    except OSError:
        return ("missing",)
    if b"\0" in data[:8192]:
        return ("binary",)
    if name is not None:
        word = _word(name)
        if name.encode("utf-8") not in data or (word is not None and not word.search(data)):
            return ("without",)
        definition = _definition(language, name) if defining else None
        if definition is not None and not definition.search(data):
            return ("undefined",)  # uses the name, defines none of it: not absent
    if not parse:
        return ("parse",)
    try:
        provider = registry.by_name(language)
        has_error, definitions, occurrences, exports = engine.extract(provider, data)
    except GrammarUnavailable as exc:
        return ("no_grammar", str(exc))
    record = (has_error, definitions, occurrences, exports)
    return ("parsed", records.blobs(record), list(occurrences))


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
    if workers <= 1 or jobs < POOL_MIN_FILES:
        return False
    import multiprocessing  # here: a cached answer never pays for the import

    return "fork" in multiprocessing.get_all_start_methods()


def _results(jobs: list, workers: int, stop, used: list[int]) -> Iterator[tuple]:
    """``_read_source`` over ``jobs``, in order (``used`` gets the processes that parse).
    With a name, each file is read here first and only those that can hold it are parsed:
    shipping thousands of files to workers costs more than reading them (grep's work,
    done once)."""
    if not jobs or jobs[0][2] is None:
        used.append(workers if _forks(workers, len(jobs)) else 1)
        yield from _parsed(jobs, workers, stop)
        return
    verdicts = []
    for done, job in enumerate(jobs):
        if stop is not None and stop():
            raise Stopped(f"stopped after {done} of {len(jobs)} files to read")
        verdicts.append(_read_source(job, parse=False))
    to_parse = [job for job, verdict in zip(jobs, verdicts, strict=True) if verdict[0] == "parse"]
    used.append(workers if _forks(workers, len(to_parse)) else 1)
    parsed = _parsed(to_parse, workers, stop)
    for verdict in verdicts:
        yield next(parsed) if verdict[0] == "parse" else verdict


def _parsed(jobs: list, workers: int, stop) -> Iterator[tuple]:
    """``_read_source`` over ``jobs``, in order: in this process, or on ``workers`` forked
    processes when there is enough to share. tree-sitter's parse releases the GIL, but its
    queries and the record building (half the time) hold it, so threads would not scale.
    Only a single-threaded caller (the CLI) forks; the daemon passes ``workers=1``."""
    if not _forks(workers, len(jobs)):
        for done, job in enumerate(jobs):
            if stop is not None and stop():
                raise Stopped(f"stopped after {done} of {len(jobs)} files to read")
            yield _read_source(job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    for language in {job[1] for job in jobs}:  # loaded once here, not in every worker
        with contextlib.suppress(GrammarUnavailable):
            registry.by_name(language).load()
    chunk = max(1, min(64, len(jobs) // (workers * 8)))
    context = multiprocessing.get_context("fork")
    done = 0
    try:
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            for result in pool.map(_read_source, jobs, chunksize=chunk):
                if stop is not None and stop():
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise Stopped(f"stopped after {done} of {len(jobs)} files to read")
                done += 1
                yield result
    except BrokenProcessPool:
        # a worker died (killed, out of memory): finish here, where an error is visible
        yield from _parsed(jobs[done:], 1, stop)


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
) -> Scan:
    """Read every source file under ``path``; with ``name``, only files that can hold it.

    A file whose bytes do not hold ``name`` as a whole word (with ``defining``: a
    definition of it, where the provider says how one is spelled) cannot give a row, so
    skipping it is exact, not a sample. A file whose ``stat`` (mtime, size, inode) matches
    the cache is not opened: its record comes from the cache, and with ``name`` only when
    the cache's name postings say it holds the name. Records carry definitions, plus
    reference counts without ``name`` (``map``) and the name's occurrences with
    ``occurrences`` (``refs``); with ``definitions`` False too, a record from the cache
    carries none (None: ``Scan.definitions`` loads a file's when asked). ``stop`` (a
    callable) is asked before each file read; when it says True the scan ends with
    ``Stopped`` (nothing is saved to the cache).
    """
    usable = {p.name for p in registry.require_any()}
    with _collector_paused():
        tree = walk(path, cwd, env)
        store = cache.Store(env, tree.root)
        store.load()
        tally = _Tally(tree.other)
        _from_cache(tree, store, tally, usable, name, stop, occurrences, defining, definitions)
    counts, no_grammar, kept, todo = tally.counts, tally.no_grammar, tally.kept, tally.todo
    prefix = tree.prefix
    jobs = [(prefix + rel, lang, name, defining) for rel, lang, _st in todo]
    used = [1]
    for (rel, language, st), result in zip(todo, _results(jobs, workers, stop, used), strict=True):
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
            blobs, names = result[1], result[2]
            store.put_record(rel, st, language, blobs, names)
            counts["parsed"] += 1
            head = marshal.loads(blobs[records.HEAD])
            extra = None
            if name is None:
                extra = marshal.loads(blobs[records.COUNTS])
            elif occurrences:
                extra = blobs[records.OCCURRENCES]
            tally.keep(rel, language, _record(head, extra, name, occurrences))
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
    return Scan(tree, kept, files, functools.partial(_definitions_of, store, prefix))


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
        self.todo: list[tuple[str, str, os.stat_result]] = []

    def keep(self, rel: str, language: str, record: Read) -> None:
        self.languages[language] += 1
        if record.has_error:
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
    hold ``name``, and leave the rest to read (``tally.todo``)."""
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
    files_get, os_stat, is_regular, large = store.files.get, os.stat, stat.S_ISREG, MAX_FILE_BYTES
    binary, unparsed = cache.BINARY, cache.UNPARSED
    missing = other = skipped_large = skipped_binary = without = undefined = 0
    for rel, language in zip(tree.paths, tree.languages, strict=True):
        if stop is not None and stop():
            raise Stopped(f"stopped after {len(tally.seen)} of {total} files")
        if language not in usable:
            tally.no_grammar[language] += 1
            continue
        try:
            st = os_stat(prefix + rel)
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
            todo.append((rel, language, st))
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
                todo.append((rel, language, st))
            continue
        if holding is not None and entry[3] not in holding:
            without += 1
            continue
        if rows_only:
            record = _rows_record(store.blob(entry, records.OCCURRENCES), name)
        else:
            record = _cached_record(store, entry, name, occurrences)
        if record is None:
            todo.append((rel, language, st))  # the cache lost it: read it again
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


def _definitions_of(store: cache.Store, prefix: str, rel: str, language: str) -> list:
    """A file's definitions for a record read without them: from the cache, else parsed
    again (its stat was checked by this scan)."""
    entry = store.files.get(rel)
    head = None
    if entry is not None and len(entry) > 6:
        head = store.part(entry, records.HEAD)
        store.close()
    if head is None:
        result = _read_source((prefix + rel, language, None, False))
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
        # rel -> [lines split so far, the bytes not split yet (None: no more)]
        self.files: dict[str, list] = {}

    def __call__(self, rel: str, line: int) -> str:
        held = self.files.get(rel)
        if held is None:
            try:
                data = _read_bytes(os.path.join(self.root, rel))
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
) -> dict:
    result = scan(path, env, name=name, cwd=cwd, stop=stop, workers=workers, defining=True)
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
) -> dict:
    result = scan(
        path, env, name=name, cwd=cwd, workers=workers, occurrences=True, definitions=False
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


def _focus(tree: Tree, focus: list[str], cwd: str | None) -> list[str]:
    """The caller's focus paths, relative to the tree's root ('dir/' for a directory)."""
    chosen = []
    for given in focus:
        full = os.path.abspath(os.path.join(cwd or os.getcwd(), given))
        if not os.path.exists(full):
            raise PathNotFound(f"no such file or directory: {given}")
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
) -> dict:
    from relore.client.code import docs, rank  # the map's alone

    result = scan(path, env, cwd=cwd, workers=workers)
    focused = _focus(result.tree, focus or [], cwd)
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
