"""The git-ignored half of the lens: parsed records kept outside the indexed tree.

A cache inside the repository (a committed ``.relore/``) was ruled out: it moves staleness
into the client and lets repo-supplied structure steer ``defs``/``refs``. This one lives in
``$RELORE_CODE_CACHE``, else ``$XDG_CACHE_HOME/relore/code``, else ``~/.cache/relore/code``,
one file per tree root, each entry keyed by the file's path, mtime and size, and the whole
file by the grammar versions that produced it. It is a cache: anything unreadable is
dropped and rebuilt, never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import marshal
import os
import sys
import tempfile
from pathlib import Path

FORMAT = 1
GRAMMAR_DISTRIBUTIONS = (
    "tree-sitter",
    "tree-sitter-python",
    "tree-sitter-javascript",
    "tree-sitter-typescript",
    "tree-sitter-go",
    "tree-sitter-rust",
)


def directory(env: dict[str, str] | os._Environ) -> Path:
    if env.get("RELORE_CODE_CACHE"):
        return Path(env["RELORE_CODE_CACHE"]).expanduser()
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]).expanduser() / "relore" / "code"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".cache" / "relore" / "code"


def stamp() -> str:
    """What produced the records: a new grammar or record format invalidates the cache."""
    versions = []
    for dist in GRAMMAR_DISTRIBUTIONS:
        try:
            versions.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist}=-")
    return f"format={FORMAT};python={sys.version_info[:2]};" + ";".join(versions)


class Store:
    """Entries of one root: ``{relative path: (mtime_ns, size, language, record)}``."""

    def __init__(self, env: dict[str, str] | os._Environ, root: str):
        self.root = root
        digest = hashlib.sha256(root.encode("utf-8", "surrogateescape")).hexdigest()[:24]
        self.path = directory(env) / f"{digest}.marshal"
        self.stamp = stamp()
        self.entries: dict[str, tuple] = {}
        self.dirty = False

    def load(self) -> dict[str, tuple]:
        try:
            data = marshal.loads(self.path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return self.entries
        if (
            isinstance(data, dict)
            and data.get("stamp") == self.stamp
            and data.get("root") == self.root
            and isinstance(data.get("files"), dict)
        ):
            self.entries = data["files"]
        return self.entries

    def get(self, rel: str, mtime_ns: int, size: int) -> tuple | None:
        entry = self.entries.get(rel)
        if entry is not None and entry[0] == mtime_ns and entry[1] == size:
            return entry
        return None

    def put(self, rel: str, mtime_ns: int, size: int, language: str, record: tuple) -> None:
        self.entries[rel] = (mtime_ns, size, language, record)
        self.dirty = True

    def save(self) -> bool:
        """Write atomically if anything changed; a cache that cannot be written is no error."""
        if not self.dirty:
            return False
        blob = marshal.dumps({"stamp": self.stamp, "root": self.root, "files": self.entries})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".marshal")
            with os.fdopen(fd, "wb") as handle:
                handle.write(blob)
            os.replace(tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
            return False
        self.dirty = False
        return True
