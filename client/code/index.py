"""The caller's tree, walked and read: files → records (parsed or cached) → ``map``/``defs``/``refs``.

Each verb returns a page dict that ``render.py`` prints and ``--json`` mirrors field for
field. Every page says what it did not read (too large, binary, no grammar, syntax errors
read with recovery) and every capped list says ``returned`` of ``total``.
"""

from __future__ import annotations

import functools
import marshal
import os
import re
import stat
import subprocess
from array import array
from collections import Counter
from collections.abc import Iterator
from typing import NamedTuple

from relore.client.code import DEFS_CAP, MAP_CAP, REFS_CAP, cache, engine, registry
from relore.client.code.providers.base import GrammarUnavailable

MAX_FILE_BYTES = 1_000_000
# Never source, wherever they appear (also when git tracks them).
SKIP_ALWAYS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
# Build output: skipped in a walk without git when the parent directory holds a project
# manifest (so ``pip/_internal/operations/build/`` in an installed package is still read).
# Under git, ``.gitignore`` decides.
SKIP_OUTPUT = frozenset({"build", "dist", "target"})
MANIFESTS = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "go.mod"}
)

# fewer files to read than this are read in this process: forking costs more than it saves
POOL_MIN_FILES = 64
# the cache's name for "holds the name but defines none of it" (a space: no identifier has one)
UNDEFINED = "defines no "
LOCATIONS_PER_NAME = 3
TEXT_CHARS = 200


class PathNotFound(RuntimeError):
    pass


class Tree:
    def __init__(
        self,
        root: str,
        scope: str,
        shown: str,
        files: list[str],
        listing: str,
        skipped_dirs: list[str] | None = None,
    ):
        self.root = root  # absolute: the git top level above the path, else the path itself
        self.scope = scope  # absolute path asked about
        self.shown = shown  # the path as the caller wrote it
        self.files = files  # relative to root
        self.listing = listing  # "git", "walk" or "file"
        self.skipped_dirs = skipped_dirs if skipped_dirs is not None else []


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


def _skipped(rel: str) -> bool:
    return any(part in SKIP_ALWAYS for part in rel.split("/"))


def _git_files(scope: str, root: str) -> list[str] | None:
    try:
        result = subprocess.run(
            [*GIT_LS_FILES[:2], scope, *GIT_LS_FILES[2:]],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None  # not ours to fix (no git, dubious ownership): fall back to a walk
    names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted(n for n in names if n)


def _git_ignored(scope: str, root: str) -> bool:
    """A path the caller named inside an ignored directory is walked, not listed by git
    (which would list nothing there)."""
    if scope == root:
        return False
    try:
        result = subprocess.run(
            ["git", "-C", root, "check-ignore", "-q", "--", os.path.relpath(scope, root)],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def _walk_files(scope: str, root: str, skipped_dirs: list[str]) -> list[str]:
    """Every file under ``scope`` (relative to ``root``), directories in sorted order, files
    of a directory before its subdirectories; symlinked directories are not followed."""
    files: list[str] = []
    base = os.path.relpath(scope, root)
    base = "" if base == "." else base.replace(os.sep, "/") + "/"
    pending = [(scope, base)]
    while pending:
        directory, rel = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        names: list[str] = []
        subdirs = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (subdirs if is_dir else names).append(entry if is_dir else entry.name)
        has_manifest = any(name in MANIFESTS for name in names)
        below = []
        for entry in sorted(subdirs, key=lambda e: e.name):
            if entry.name in SKIP_ALWAYS or (has_manifest and entry.name in SKIP_OUTPUT):
                skipped_dirs.append(rel + entry.name)
            elif not entry.is_symlink():
                below.append((entry.path, f"{rel}{entry.name}/"))
        files.extend(rel + name for name in sorted(names))
        pending.extend(reversed(below))
    return files


def walk(path: str, cwd: str | None = None) -> Tree:
    shown = path
    scope = os.path.abspath(os.path.join(cwd or os.getcwd(), path))
    if not os.path.exists(scope):
        raise PathNotFound(f"no such file or directory: {path}")
    base = scope if os.path.isdir(scope) else os.path.dirname(scope)
    git_root = _git_root(base)
    root = git_root or base
    if os.path.isfile(scope):
        return Tree(root, scope, shown, [os.path.relpath(scope, root)], "file")
    if git_root is not None and not _git_ignored(scope, root):
        listed = _git_files(scope, root)
        if listed is not None:
            # only the part below the path asked about is checked: asking for a path
            # inside .venv on purpose reads it
            cut = len(os.path.relpath(scope, root)) + 1 if scope != root else 0
            kept = [rel for rel in listed if not _skipped(rel[cut:])]
            dropped = sorted({rel.rsplit("/", 1)[0] for rel in listed if _skipped(rel[cut:])})
            return Tree(root, scope, shown, kept, "git", dropped)
    skipped: list[str] = []
    files = _walk_files(scope, root, skipped)
    return Tree(root, scope, shown, files, "walk", skipped)


class Read(NamedTuple):
    """One source file as the verbs read it: ``counts`` for ``map``, ``occurrences`` (of the
    name asked, or all) for ``refs``; None when not asked for."""

    has_error: bool
    definitions: list
    counts: dict | None  # name -> (bare references, references through an object)
    occurrences: dict | None
    exports: tuple | None = None  # what it declares public (``Provider.exports``)


class Scan(NamedTuple):
    tree: Tree
    records: list[tuple[str, str, Read]]  # (relative path, language, record)
    files: dict


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


def pack(occurrences: dict[str, list]) -> dict[str, bytes]:
    """Occurrences as the cache keeps them: each name's rows flattened into int32s, so a
    lookup unpacks one name and loading a record builds no tuple."""
    return {
        name: array("i", [value for row in rows for value in row]).tobytes()
        for name, rows in occurrences.items()
    }


def unpack(packed: bytes) -> list[tuple[int, int, int, int]]:
    values = array("i")
    values.frombytes(packed)
    return list(zip(values[0::4], values[1::4], values[2::4], values[3::4], strict=True))


def _read_source(job: tuple[str, str, str | None, bool]) -> tuple:
    """Read one file and parse it unless it is binary or cannot hold the name. Runs in a
    worker process, so it returns bytes: the record's three blobs as the cache stores them,
    and the names it holds."""
    full, language, name, defining = job
    try:
        with open(full, "rb") as handle:
            data = handle.read()
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
    try:
        provider = registry.by_name(language)
        has_error, definitions, occurrences, exports = engine.extract(provider, data)
    except GrammarUnavailable as exc:
        return ("no_grammar", str(exc))
    blobs = (
        marshal.dumps((has_error, definitions, exports)),
        marshal.dumps(engine.counts(occurrences)),
        marshal.dumps(pack(occurrences)),
    )
    return ("parsed", blobs, list(occurrences))


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


def _results(jobs: list, workers: int, stop) -> Iterator[tuple]:
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
        yield from _results(jobs[done:], 1, stop)


def scan(
    path: str,
    env,
    name: str | None = None,
    cwd: str | None = None,
    stop=None,
    workers: int = 1,
    occurrences: bool = False,
    defining: bool = False,
) -> Scan:
    """Read every source file under ``path``; with ``name``, only files that can hold it.

    A file whose bytes do not hold ``name`` as a whole word (with ``defining``: a
    definition of it, where the provider says how one is spelled) cannot give a row, so
    skipping it is exact, not a sample. A file whose ``stat`` (mtime, size, inode) matches
    the cache is not opened: its record comes from the cache, and with ``name`` only when
    the cache's name postings say it holds the name. Records carry definitions, plus
    reference counts without ``name`` (``map``) and the name's occurrences with
    ``occurrences`` (``refs``). ``stop`` (a callable) is asked before each file read; when
    it says True the scan ends with ``Stopped`` (nothing is saved to the cache).
    """
    usable = {p.name for p in registry.require_any()}
    extensions = registry.by_extension()
    tree = walk(path, cwd)
    store = cache.Store(env, tree.root)
    store.load()
    known = store.holders(name) if name is not None else None
    known_undefined = (
        store.holders(UNDEFINED + name)[1]
        if defining and name is not None and known is not None
        else set()
    )
    counts: Counter[str] = Counter()
    no_grammar: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    records: list[tuple[str, str, Read]] = []
    seen: set[str] = set()
    todo: list[tuple[str, str, os.stat_result]] = []

    def keep(rel: str, language: str, record: Read) -> None:
        languages[language] += 1
        if record.has_error:
            counts["syntax_errors"] += 1
        records.append((rel, language, record))

    for rel in tree.files:
        if stop is not None and stop():
            raise Stopped(f"stopped after {len(seen)} of {len(tree.files)} files")
        dot = rel.rfind(".")
        provider = extensions.get(rel[dot:].lower()) if dot > rel.rfind("/") + 1 else None
        if provider is None:
            counts["other"] += 1
            continue
        if provider.name not in usable:
            no_grammar[provider.name] += 1
            continue
        try:
            st = os.stat(os.path.join(tree.root, rel))
        except OSError:
            counts["missing"] += 1
            continue
        if not stat.S_ISREG(st.st_mode):
            counts["other"] += 1
            continue
        seen.add(rel)
        if st.st_size > MAX_FILE_BYTES:
            counts["skipped_large"] += 1
            continue
        entry = store.get(rel, st)
        if entry is None:
            todo.append((rel, provider.name, st))
            continue
        where = entry[5]
        if where == cache.BINARY:
            counts["skipped_binary"] += 1
            continue
        if where == cache.UNPARSED:
            if known is not None and entry[3] in known[1]:
                counts["without_name"] += 1
            elif entry[3] in known_undefined:
                counts["without_definition"] += 1
            else:
                todo.append((rel, provider.name, st))
            continue
        if known is not None and entry[3] not in known[0]:
            counts["without_name"] += 1
            continue
        head = store.part(entry, cache.HEAD)
        extra = None
        if head is not None and name is None:
            extra = store.part(entry, cache.COUNTS)
        elif head is not None and occurrences:
            extra = store.part(entry, cache.OCCURRENCES)
        if head is None or (extra is None and (name is None or occurrences)):
            todo.append((rel, provider.name, st))  # the cache lost it: read it again
            continue
        counts["from_cache"] += 1
        keep(rel, provider.name, _record(head, extra, name, occurrences))
    jobs = [(os.path.join(tree.root, rel), lang, name, defining) for rel, lang, _st in todo]
    used = workers if _forks(workers, len(jobs)) else 1
    for (rel, language, st), result in zip(todo, _results(jobs, workers, stop), strict=True):
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
            head = marshal.loads(blobs[cache.HEAD])
            extra = None
            if name is None:
                extra = marshal.loads(blobs[cache.COUNTS])
            elif occurrences:
                extra = marshal.loads(blobs[cache.OCCURRENCES])
            keep(rel, language, _record(head, extra, name, occurrences))
    records.sort(key=lambda item: item[0])
    _prune(store, tree, seen)
    store.save()
    if not records and no_grammar and not counts["without_name"]:
        missing = ", ".join(f"{n} {lang}" for lang, n in sorted(no_grammar.items()))
        raise registry.GrammarMissing(
            f"this tree's source files ({missing} files) have no installed grammar: "
            f"install them with `{registry.INSTALL_LINE}`"
        )
    files = {
        "listing": tree.listing,
        "source_files": len(records) + counts["without_name"] + counts["without_definition"],
        "read": len(records),
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
        "languages": dict(sorted(languages.items())),
        "max_file_bytes": MAX_FILE_BYTES,
        "workers": used,
        "cache": str(store.path),
    }
    return Scan(tree, records, files)


def _record(head: tuple, extra, name: str | None, occurrences: bool) -> Read:
    if name is None:
        return Read(head[0], head[1], extra, None, head[2])
    if not occurrences:
        return Read(head[0], head[1], None, None, head[2])
    packed = extra.get(name)
    return Read(head[0], head[1], None, {name: unpack(packed)} if packed else {}, head[2])


def _prune(store: cache.Store, tree: Tree, seen: set[str]) -> None:
    """Forget cached files that are gone from the part of the tree just walked."""
    if tree.listing == "file":
        return
    prefix = os.path.relpath(tree.scope, tree.root)
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    store.forget([rel for rel in store.files if rel.startswith(prefix) and rel not in seen])


def _shown(tree: Tree, rel: str) -> str:
    if tree.listing == "file":
        return tree.shown
    full = os.path.join(tree.root, rel)
    return os.path.normpath(os.path.join(tree.shown, os.path.relpath(full, tree.scope)))


class _Lines:
    """Source lines of the returned rows only, read once per file."""

    def __init__(self, root: str):
        self.root = root
        self.files: dict[str, list[str]] = {}

    def __call__(self, rel: str, line: int) -> str:
        if rel not in self.files:
            try:
                with open(os.path.join(self.root, rel), "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
            except OSError:
                text = ""
            self.files[rel] = text.splitlines()
        lines = self.files[rel]
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
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
    result = scan(path, env, name=name, cwd=cwd, workers=workers, occurrences=True)
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
            "scope": _enclosing(record.definitions, occurrence[0]),
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
    from relore.client.code import rank  # the map's alone

    result = scan(path, env, cwd=cwd, workers=workers)
    focused = _focus(result.tree, focus or [], cwd)
    chosen, total, info = rank.rank(result.records, focused, offset=offset, limit=limit)
    page = _page("map", result.tree, limit, offset, total, len(chosen))
    page["score"] = rank.SCORE
    page["focus"] = list(focus or [])
    page["entry_files"] = [_shown(result.tree, rel) for rel in info["entry_files"]]
    page["declared"] = info["declared"]
    page["dunders_excluded"] = info["dunders"]
    page["everywhere_excluded"] = info["everywhere"]
    page["entries"] = [
        {
            "name": e["name"],
            "score": round(e["score"], 3),
            "referenced_from": e["referenced_from"],
            "references": e["references"],
            "definitions": e["definitions"],
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
