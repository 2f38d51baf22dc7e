"""The directory listings a walk keeps between runs (``dirs.marshal`` beside the
root's records): each keyed by its directory's ``stat``, used while the key matches, and
dropped whole when a file is not of the shape this module writes. ``walked.marshal`` keeps
the last walk's result, answered again while no directory under it changed."""

from __future__ import annotations

import contextlib
import marshal
import os

from relore.lens import cache_files

FORMAT = 2  # 2: a symbolic link is another file, never a source nor entered


# A listing's fields: the directory's stat (its key; MTIME None: listed racily, never
# matches), its source files' names joined by NULs (sorted) and their languages, how many
# other files (symbolic links too), whether a manifest is among them, and its subdirectories'
# names joined by NULs (sorted).
MTIME, CTIME, INODE, DEVICE, SOURCES, LANGUAGES, OTHER, MANIFEST, SUBDIRS = range(9)
MANIFESTS = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "go.mod"}
)


def path_for(env, root: str) -> str:
    return os.path.join(cache_files.root_directory(env, root), "dirs.marshal")


def _signature(extensions: dict[str, str]) -> tuple:
    """What a listing's sorting depends on besides the directory: another extension map or
    manifest list invalidates every listing."""
    return (FORMAT, tuple(sorted(extensions.items())), tuple(sorted(MANIFESTS)))


def _usable(dirs, languages: frozenset[str]) -> bool:
    """Listings of the shape this module writes, naming only entries inside their
    directory and languages it knows (the cache is not trusted to point anywhere else)."""
    if type(dirs) is not dict:
        return False
    names: list[str] = []
    used: set[str] = set()
    try:
        for rel, entry in dirs.items():
            if type(rel) is not str or type(entry) is not tuple or len(entry) != SUBDIRS + 1:
                return False
            sources, found, other, manifest, subdirs = entry[SOURCES:]
            if (
                type(sources) is not str
                or type(found) is not list
                or len(found) != (sources.count("\0") + 1 if sources else 0)
                or type(other) is not int
                or type(manifest) is not bool
                or type(subdirs) is not str
            ):
                return False
            names.extend(joined for joined in (sources, subdirs) if joined)
            used.update(found)
    except TypeError:  # a language that cannot be hashed
        return False
    every = "\0".join(names)
    between = f"\0{every}\0"  # every name between NULs
    return (
        "/" not in every
        and os.sep not in every
        and (not names or "\0\0" not in between)  # no empty name
        and "\0.\0" not in between
        and "\0..\0" not in between
        and languages.issuperset(used)
    )


class Listings:
    """One root's kept directory listings, ``{directory relative to root ('' or 'a/b/'):
    listing}``; ``walk`` reads and updates them, ``save`` writes them when changed."""

    def __init__(self, env, root: str, extensions: dict[str, str]):
        self.path = path_for(env, root) if env is not None else None
        self.root = root
        self.signature = _signature(extensions)
        self.languages = frozenset(extensions.values())
        self.kept: dict[str, tuple] = {}
        self.load()

    def load(self) -> None:
        if self.path is None:
            return
        try:
            data = marshal.loads(cache_files.read_bytes(self.path))
        except (OSError, EOFError, ValueError, TypeError):
            return
        if (
            type(data) is dict
            and data.get("signature") == self.signature
            and data.get("root") == self.root
            and _usable(data.get("dirs"), self.languages)
        ):
            self.kept = data["dirs"]

    def keep_walk(self, walked: Walked | None) -> None:
        """Keep the walk just ended (``Walked``), or none (a racy listing in it)."""
        if self.path is None:
            return
        path = walked_path_for_listings(self.path)
        try:
            if walked is None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
                return
            os.makedirs(os.path.dirname(path), exist_ok=True)
            cache_files.write_atomic(path, walked.blob(self.signature, self.root))
        except (OSError, ValueError):
            pass  # a cache that cannot be written is no error

    def save(self, fresh: dict[str, tuple], base: str) -> None:
        """Keep ``fresh`` (every directory just walked under ``base``) and the listings
        outside ``base``; those under it that were not walked are gone."""
        if self.path is None:
            return
        outside = {rel: e for rel, e in self.kept.items() if not rel.startswith(base)}
        if fresh == {rel: e for rel, e in self.kept.items() if rel.startswith(base)}:
            return
        blob = {
            "signature": self.signature,
            "root": self.root,
            "dirs": {**outside, **fresh},
        }
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            cache_files.write_atomic(self.path, marshal.dumps(blob))
        except (OSError, ValueError):
            pass  # a cache that cannot be written is no error


def walked_path_for(env, root: str) -> str:
    return walked_path_for_listings(path_for(env, root))


def walked_path_for_listings(listings_path: str) -> str:
    return os.path.join(os.path.dirname(listings_path), "walked.marshal")


class Walked:
    """A whole walk as it ended, kept beside the listings (``walked.marshal``): every
    directory it stat'ed in order with that ``stat`` (mtime, ctime, inode, device), and
    what it found (each path kept relative to the walk's base). While every directory's
    stat is unchanged, the walk would list nothing and rebuild the same paths from the
    same listings: the next run stats the directories and takes the paths, without
    loading, checking and joining the listings (half a cached answer's walk). Kept only
    for a walk with no racy listing."""

    def __init__(self, base, fresh, sources, other, skipped):
        self.base = base
        self.dirs = list(fresh)
        self.keys = [key for entry in fresh.values() for key in entry[: DEVICE + 1]]
        self.sources, self.other, self.skipped = sources, other, skipped

    def blob(self, signature: tuple, root: str) -> bytes:
        paths, languages = self.sources
        names = sorted(set(languages))
        code = {name: at for at, name in enumerate(names)}
        cut = len(self.base)  # every path below starts with the base
        return marshal.dumps(
            {
                "signature": signature,
                "root": root,
                "base": self.base,
                "dirs": "\0".join(rel[cut:] for rel in self.dirs),
                "keys": self.keys,
                "paths": "\0".join(rel[cut:] for rel in paths),
                "languages": names,
                "codes": bytes(code[language] for language in languages),
                "other": self.other,
                "skipped": "\0".join(rel[cut:] for rel in self.skipped),
            }
        )


def _relative(joined: str, count: int) -> bool:
    """``joined`` is ``count`` relative paths joined by NULs, none empty or absolute, none
    holding an empty, '.' or '..' part: the cache is not trusted to point anywhere else."""
    if not joined:
        return count == 0
    parts = f"\0{joined}\0".replace("/", "\0")
    return (
        joined.count("\0") + 1 == count
        and "\0\0" not in parts
        and "\0.\0" not in parts
        and "\0..\0" not in parts
        and (os.sep == "/" or os.sep not in joined)
    )


def _walked_base(env, root: str) -> str | None:
    """The base of the walk kept for ``root``, if any."""
    try:
        data = marshal.loads(cache_files.read_bytes(walked_path_for(env, root)))
        return data.get("base") if type(data) is dict else None
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _walked_again(env, root: str, base: str, extensions: dict[str, str]):
    """The kept walk of ``base`` (``Walked``) when no directory's stat changed since:
    ``((paths, languages), other, skipped)``; else None (walk)."""
    try:
        data = marshal.loads(cache_files.read_bytes(walked_path_for(env, root)))
    except (OSError, EOFError, ValueError, TypeError):
        return None
    try:
        if (
            type(data) is not dict
            or data.get("signature") != _signature(extensions)
            or data.get("root") != root
            or data.get("base") != base
        ):
            return None
        dirs, keys, paths, codes = data["dirs"], data["keys"], data["paths"], data["codes"]
        names, other, skipped = data["languages"], data["other"], data["skipped"]
        count = paths.count("\0") + 1 if paths else 0
        below = dirs[1:].replace("/\0", "\0")[:-1]  # the base's own ('') left out
        if (
            type(dirs) is not str
            or type(keys) is not list
            or type(paths) is not str
            or type(codes) is not bytes
            or type(names) is not list
            or type(other) is not int
            or type(skipped) is not str
            or not (dirs == "" or (dirs.startswith("\0") and dirs.endswith("/")))
            or len(keys) != 4 * (dirs.count("\0") + 1)
            or len(codes) != count
            or (codes and max(codes) >= len(names))
            or not frozenset(extensions.values()).issuperset(names)
            or not _relative(paths, count)
            or not _relative(below, dirs.count("\0"))
            or not _relative(skipped, skipped.count("\0") + 1 if skipped else 0)
        ):
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    prefix = (root if root.endswith("/") else root + "/") + base
    at, os_lstat = 0, os.lstat  # a directory become a link is another directory
    for rel in dirs.split("\0"):
        try:
            st = os_lstat(prefix + rel)
        except OSError:
            return None
        if (
            keys[at] != st.st_mtime_ns
            or keys[at + 1] != st.st_ctime_ns
            or keys[at + 2] != st.st_ino
            or keys[at + 3] != st.st_dev
        ):
            return None
        at += 4
    found = (base + paths.replace("\0", "\0" + base)).split("\0") if paths else []
    passed = (base + skipped.replace("\0", "\0" + base)).split("\0") if skipped else []
    return (found, list(map(names.__getitem__, codes))), other, passed
