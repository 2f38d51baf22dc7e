"""The scan: the caller's tree (``listing.walk``) read into records, from the cache
where a file's ``stat`` still matches, else parsed (``pool``), and the cache brought up to
date. ``scan`` returns a ``Scan`` every verb pages from."""

from __future__ import annotations

import contextlib
import functools
import gc
import marshal
import os
import stat
from collections import Counter, namedtuple
from collections.abc import Iterator

from relore.lens import cache, engine, records, registry
from relore.lens.confine import Beneath
from relore.lens.listing import Tree, walk
from relore.lens.pool import Stopped, _results
from relore.lens.sourcefile import Read, _read_source

MAX_FILE_BYTES = 1_000_000


# the cache's name for "holds the name but defines none of it" (a space: no identifier has one)
UNDEFINED = "defines no "


# a file re-read for one more name than this keeps every name's rows (a whole record), not
# only the names asked of it
SCOPED_NAMES = 8


class Scan(namedtuple("Scan", "tree records files definitions")):
    """``tree`` (``Tree``), ``records`` ([(relative path, language, ``Read``)]), ``files``
    (the page's counts) and ``definitions``: (relative path, language) -> the file's
    definitions, for a record read without them."""

    __slots__ = ()


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
