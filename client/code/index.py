"""The caller's tree, walked and read: files → records (parsed or cached) → ``map``/``defs``/``refs``.

Each verb returns a page dict that ``render.py`` prints and ``--json`` mirrors field for
field. Every page says what it did not read (too large, binary, no grammar, syntax errors
read with recovery) and every capped list says ``returned`` of ``total``.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from dataclasses import dataclass, field

from relore.client.code import DEFS_CAP, MAP_CAP, REFS_CAP, cache, engine, registry

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

LOCATIONS_PER_NAME = 3
TEXT_CHARS = 200


class PathNotFound(RuntimeError):
    pass


@dataclass
class Tree:
    root: str  # absolute: the git top level above the path, else the path itself
    scope: str  # absolute path asked about
    shown: str  # the path as the caller wrote it
    files: list[str]  # relative to root
    listing: str  # "git" or "walk"
    skipped_dirs: list[str] = field(default_factory=list)


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
    files: list[str] = []
    for directory, dirnames, filenames in os.walk(scope):
        has_manifest = any(name in MANIFESTS for name in filenames)
        keep = []
        for name in sorted(dirnames):
            if name in SKIP_ALWAYS or (has_manifest and name in SKIP_OUTPUT):
                skipped_dirs.append(os.path.relpath(os.path.join(directory, name), root))
            else:
                keep.append(name)
        dirnames[:] = keep
        rel_dir = os.path.relpath(directory, root)
        for name in sorted(filenames):
            files.append(name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/"))
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


@dataclass
class Scan:
    tree: Tree
    records: list[tuple[str, str, tuple]]  # (relative path, language, record)
    files: dict


class Stopped(RuntimeError):
    """The caller's ``stop`` said stop (the daemon's deadline passed) before the scan ended."""


def scan(path: str, env, name: str | None = None, cwd: str | None = None, stop=None) -> Scan:
    """Read every source file under ``path``; with ``name``, parse only files containing it.

    A file whose bytes do not contain ``name`` cannot hold an identifier spelled ``name``,
    so skipping it is exact, not a sample. ``stop`` (a callable) is asked before each file;
    when it says True the scan ends with ``Stopped`` (nothing is saved to the cache).
    """
    usable = {p.name for p in registry.require_any()}
    tree = walk(path, cwd)
    store = cache.Store(env, tree.root)
    store.load()
    needle = name.encode("utf-8") if name is not None else None
    counts: Counter[str] = Counter()
    no_grammar: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    records: list[tuple[str, str, tuple]] = []
    seen: set[str] = set()
    for rel in tree.files:
        if stop is not None and stop():
            raise Stopped(f"stopped after {len(seen)} of {len(tree.files)} files")
        provider = registry.for_path(rel)
        if provider is None:
            counts["other"] += 1
            continue
        if provider.name not in usable:
            no_grammar[provider.name] += 1
            continue
        full = os.path.join(tree.root, rel)
        try:
            st = os.stat(full)
        except OSError:
            counts["missing"] += 1
            continue
        if not os.path.isfile(full):
            counts["other"] += 1
            continue
        seen.add(rel)
        if st.st_size > MAX_FILE_BYTES:
            counts["skipped_large"] += 1
            continue
        entry = store.get(rel, st.st_mtime_ns, st.st_size)
        if entry is not None:
            record = entry[3]
            if record is None:
                counts["skipped_binary"] += 1
                continue
            counts["from_cache"] += 1
        else:
            try:
                with open(full, "rb") as handle:
                    data = handle.read()
            except OSError:
                counts["missing"] += 1
                continue
            if b"\0" in data[:8192]:
                store.put(rel, st.st_mtime_ns, st.st_size, provider.name, None)
                counts["skipped_binary"] += 1
                continue
            if needle is not None and needle not in data:
                counts["without_name"] += 1
                continue
            record = engine.extract(provider, data)
            store.put(rel, st.st_mtime_ns, st.st_size, provider.name, record)
            counts["parsed"] += 1
        languages[provider.name] += 1
        if record[0]:
            counts["syntax_errors"] += 1
        records.append((rel, provider.name, record))
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
        "source_files": len(records) + counts["without_name"],
        "read": len(records),
        "parsed": counts["parsed"],
        "from_cache": counts["from_cache"],
        "without_name": counts["without_name"],
        "syntax_errors": counts["syntax_errors"],
        "skipped_large": counts["skipped_large"],
        "skipped_binary": counts["skipped_binary"],
        "no_grammar": dict(sorted(no_grammar.items())),
        "other_files": counts["other"],
        "skipped_dirs": len(tree.skipped_dirs),
        "skipped_dir_examples": tree.skipped_dirs[:5],
        "languages": dict(sorted(languages.items())),
        "max_file_bytes": MAX_FILE_BYTES,
        "cache": str(store.path),
    }
    return Scan(tree, records, files)


def _prune(store: cache.Store, tree: Tree, seen: set[str]) -> None:
    """Forget cached files that are gone from the part of the tree just walked."""
    if tree.listing == "file":
        return
    prefix = os.path.relpath(tree.scope, tree.root)
    prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
    stale = [rel for rel in store.entries if rel.startswith(prefix) and rel not in seen]
    for rel in stale:
        del store.entries[rel]
    store.dirty = store.dirty or bool(stale)


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
    name: str, path: str, env, limit: int = DEFS_CAP, offset: int = 0, cwd=None, stop=None
) -> dict:
    result = scan(path, env, name=name, cwd=cwd, stop=stop)
    rows = [
        (rel, language, bool(record[0]), d)
        for rel, language, record in result.records
        for d in record[1]
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
) -> dict:
    result = scan(path, env, name=name, cwd=cwd)
    counts: Counter[str] = Counter()
    rows = []
    for rel, language, record in result.records:
        for occurrence in record[2].get(name, ()):
            row_kind = engine.KINDS[occurrence[3]]
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
            "scope": _enclosing(record[1], occurrence[0]),
            "language": language,
            "syntax_errors_in_file": bool(record[0]),
            "text": lines(rel, occurrence[1]),
        }
        for rel, language, record, occurrence, row_kind in chosen
    ]
    page["files"] = result.files
    return page


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def rank(scan_records: list[tuple[str, str, tuple]]) -> tuple[list[dict], dict]:
    """Score every defined name: occurrences of it in the tree / definitions sharing it.

    The map counts a *written name*, not a resolved symbol: three classes each defining
    ``info`` share one count, so the count is divided by 3 (undivided, a name defined in
    many places — ``__init__``, ``to`` — fills the map and says nothing). Dunders are
    excluded outright and counted.
    """
    definitions: dict[str, list] = {}
    dunder_names: set[str] = set()
    dunder_defs = 0
    for rel, _language, record in scan_records:
        for d in record[1]:
            if is_dunder(d[0]):
                dunder_names.add(d[0])
                dunder_defs += 1
                continue
            definitions.setdefault(d[0], []).append((rel, d))
    occurrences: Counter[str] = Counter()
    for _rel, _language, record in scan_records:
        for name, found in record[2].items():
            if name in definitions:
                occurrences[name] += len(found)
    entries = []
    for name, places in definitions.items():
        score = occurrences[name] / len(places)
        entries.append(
            {
                "name": name,
                "score": round(score, 2),
                "occurrences": occurrences[name],
                "definitions": len(places),
                "places": sorted(places, key=lambda p: (p[0], p[1][3])),
            }
        )
    entries.sort(key=lambda e: (-e["occurrences"] / e["definitions"], e["name"]))
    return entries, {"names": len(dunder_names), "definitions": dunder_defs}


def repo_map(path: str, env, limit: int = MAP_CAP, offset: int = 0, cwd=None) -> dict:
    result = scan(path, env, cwd=cwd)
    entries, dunders = rank(result.records)
    chosen = entries[offset : offset + limit]
    page = _page("map", result.tree, limit, offset, len(entries), len(chosen))
    page["score"] = "occurrences / definitions"
    page["dunders_excluded"] = dunders
    page["entries"] = [
        {
            "name": e["name"],
            "score": e["score"],
            "occurrences": e["occurrences"],
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
