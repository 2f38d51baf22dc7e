"""The caller's tree (``listing.py``) read: files → records (parsed or cached) → ``map``/``defs``/``refs``.

Each verb returns a page dict that ``contract/render/`` prints and ``--json`` mirrors field for
field. Every page says what it did not read (too large, binary, no grammar, syntax errors
read with recovery) and every capped list says ``returned`` of ``total``.

This module holds the three verbs and their pages; ``tree_scan`` reads the tree into
records (with the cache), ``pool`` is the worker processes, ``sourcefile`` reads one file.
"""

from __future__ import annotations

import os
from collections import Counter

from relore.lens import DEFS_CAP, MAP_CAP, REFS_CAP, engine
from relore.lens.confine import Beneath, OutOfTree, PathNotFound, resolve
from relore.lens.listing import Tree, walk
from relore.lens.pool import Stopped, workers_for
from relore.lens.tree_scan import scan

__all__ = [
    "OutOfTree",
    "PathNotFound",
    "Stopped",
    "Tree",
    "defs",
    "refs",
    "repo_map",
    "scan",
    "walk",
    "workers_for",
]

LOCATIONS_PER_NAME = 3
TEXT_CHARS = 200


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
