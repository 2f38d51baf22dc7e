"""Which files are the tree: ``git ls-files`` under git, else a walk that keeps each
directory's listing between runs (as git's untracked cache does).

A listing is the directory's entries as the walk reads them: its source files (name and
language), how many other files (symbolic links among them), whether a project manifest is
there, and its subdirectories. It is kept in ``dirs.marshal`` beside the root's records
(``cache_files.root_directory``), keyed by the directory's ``stat`` (mtime, ctime, inode,
device): adding, removing or renaming an entry changes the directory's mtime, so while the
key matches, the directory is not listed again. What a file holds is not in its listing:
the scan still ``stat``s every source file.

A filesystem whose clock ticks coarsely (1 s, 2 s, a kernel tick) gives an entry added in
the same tick as the last change the mtime the directory already had: a listing's key
cannot see it. A listing is kept only when its directory's mtime is at least ``RACY_NS``
older than when it was listed; otherwise it is used for this run and listed again on the
next (git's racily clean entries).

A symbolic link is never followed nor read (``confine.py``): a walk counts it as another
file and never enters it, whatever it points at.

The listings are a cache: a file that cannot be read, or whose shapes or names are not what
this module writes, is dropped and the tree walked afresh.

What git says of the tree: ``git_files``; the listings kept between runs:
``kept_listings``; this module walks and sorts the tree's files.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time

from relore.lens import registry
from relore.lens.confine import PathNotFound, resolve
from relore.lens.git_files import _asking_ignored, _git_files, _git_root
from relore.lens.kept_listings import (
    CTIME,
    DEVICE,
    INODE,
    MANIFESTS,
    MTIME,
    Listings,
    Walked,
    _walked_again,
    _walked_base,
    walked_path_for,
)

__all__ = ["PathNotFound", "Tree", "walk"]


# a directory changed less than this long before it was listed is listed again next run
RACY_NS = 2_000_000_000


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


class Tree:
    def __init__(
        self,
        root: str,
        scope: str,
        shown: str,
        sources: tuple[list[str], list[str]],
        other: int,
        listing: str,
        skipped_dirs: list[str] | None = None,
    ):
        # as the filesystem names it (no link in it): the git top level above the path, else
        # the path itself
        self.root = root
        self.scope = scope  # the path asked about, as the filesystem names it
        self.shown = shown  # the path as the caller wrote it
        # each source file's path relative to root, and its language
        self.paths, self.languages = sources
        self.other = other  # files no grammar reads
        self.listing = listing  # "git", "walk" or "file"
        self.skipped_dirs = skipped_dirs if skipped_dirs is not None else []
        self.prefix = root if root.endswith("/") else root + "/"  # a relative path's start


def _skipped(rel: str) -> bool:
    return any(part in SKIP_ALWAYS for part in rel.split("/"))


def _language(name: str, extensions: dict[str, str]) -> str | None:
    dot = name.rfind(".")
    return extensions.get(name[dot:].lower()) if dot > 0 else None


def _sorted_out(rels: list[str], extensions: dict[str, str]) -> tuple[tuple, int]:
    """``((paths, languages) of the source files, how many other files)`` of paths
    relative to the root."""
    paths: list[str] = []
    languages: list[str] = []
    for rel in rels:
        language = _language(rel[rel.rfind("/") + 1 :], extensions)
        if language is not None:
            paths.append(rel)
            languages.append(language)
    return (paths, languages), len(rels) - len(paths)


def _list(directory: str, st: os.stat_result, extensions: dict[str, str]) -> tuple | None:
    """The directory's listing, read now; None when it cannot be read. A symbolic link is
    one more other file, whatever it points at."""
    files: list[str] = []
    subdirs: list[str] = []
    links = 0
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    link = not is_dir and entry.is_symlink()
                except OSError:
                    is_dir = link = False
                if link:
                    links += 1
                else:
                    (subdirs if is_dir else files).append(entry.name)
    except OSError:
        return None
    files.sort()
    sources: list[str] = []
    languages: list[str] = []
    for name in files:
        dot = name.rfind(".")
        language = extensions.get(name[dot:].lower()) if dot > 0 else None
        if language is not None:
            sources.append(name)
            languages.append(language)
    return (
        st.st_mtime_ns,
        st.st_ctime_ns,
        st.st_ino,
        st.st_dev,
        "\0".join(sources),
        languages,
        len(files) - len(sources) + links,
        not MANIFESTS.isdisjoint(files),
        "\0".join(sorted(subdirs)),
    )


def _walk(
    scope: str, base: str, listings: Listings, extensions: dict[str, str]
) -> tuple[tuple[list[str], list[str]], int, list[str]]:
    """``((paths, languages) of the source files, other files, skipped directories)``
    under ``scope``: directories in sorted order, files of a directory before its
    subdirectories; a symbolic link is neither read nor entered. A directory whose listing
    is kept costs one ``lstat``."""
    listed_at = time.time_ns()
    kept = listings.kept
    fresh: dict[str, tuple] = {}
    paths: list[str] = []
    languages: list[str] = []
    other = 0
    skipped: list[str] = []
    racy_seen = False
    pending = [(scope, base)]
    while pending:
        directory, rel = pending.pop()
        try:
            st = os.lstat(directory)  # (listed as a directory: become a link, not entered)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        entry = kept.get(rel)
        if (
            entry is None
            or entry[MTIME] != st.st_mtime_ns
            or entry[CTIME] != st.st_ctime_ns
            or entry[INODE] != st.st_ino
            or entry[DEVICE] != st.st_dev
        ):
            entry = _list(directory, st, extensions)
            if entry is None:
                continue
            # racily listed: used now, listed again next run
            racy = listed_at - st.st_mtime_ns < RACY_NS
            racy_seen = racy_seen or racy
            fresh[rel] = (None, *entry[CTIME:]) if racy else entry
        else:
            fresh[rel] = entry
        _mtime, _ctime, _ino, _dev, names, found, others, manifest, subdirs = entry
        if names:  # each name with rel before it, built in two calls
            paths += (rel + names.replace("\0", "\0" + rel)).split("\0")
            languages += found
        other += others
        prefix = directory if directory.endswith("/") else directory + "/"
        walked = []
        for name in subdirs.split("\0") if subdirs else ():
            if name in SKIP_ALWAYS or (manifest and name in SKIP_OUTPUT):
                skipped.append(rel + name)
            else:
                walked.append((prefix + name, f"{rel}{name}/"))
        pending.extend(reversed(walked))
    listings.save(fresh, base)
    walked = None
    if not racy_seen:  # else the next run walks again, as it lists the racy ones again
        walked = Walked(base, fresh, (paths, languages), other, skipped)
    listings.keep_walk(walked)
    return (paths, languages), other, skipped


def walk(path: str, cwd: str | None = None, env=None, within: str | None = None) -> Tree:
    """The tree at ``path``: a file, ``git ls-files`` under git, else a walk (whose
    listings are kept in ``env``'s cache; ``env`` None keeps none). ``path`` reached through
    a symbolic link, or outside ``within``, is refused (``confine.resolve``)."""
    shown = path
    scope = resolve(path, cwd, within)
    extensions = {ext: p.name for ext, p in registry.by_extension().items()}
    base = scope if os.path.isdir(scope) else os.path.dirname(scope)
    git_root = _git_root(base)
    root = git_root or base
    if os.path.isfile(scope):
        sources, other = _sorted_out([os.path.relpath(scope, root)], extensions)
        return Tree(root, scope, shown, sources, other, "file")
    rel = os.path.relpath(scope, root)
    base_rel = "" if rel == "." else rel.replace(os.sep, "/") + "/"
    again, tried = None, False
    if git_root is not None:
        ignored = _asking_ignored(scope, root)
        if scope != root and env is not None:
            # while git answers: a path inside the tree was walked last time when ignored
            again, tried = _walked_again(env, root, base_rel, extensions), True
        if not ignored():
            if tried and _walked_base(env, root) == base_rel:
                # ignored no more: its kept walk is not to be looked at every run
                with contextlib.suppress(OSError):
                    os.unlink(walked_path_for(env, root))
            again, tried = None, False
            listed = _git_files(scope)
            if listed is not None:
                # only the part below the path asked about is checked: asking for a path
                # inside .venv on purpose reads it
                cut = len(rel) + 1 if scope != root else 0
                kept = [path for path in listed if not _skipped(path[cut:])]
                dropped = sorted(
                    {path.rsplit("/", 1)[0] for path in listed if _skipped(path[cut:])}
                )
                sources, other = _sorted_out(kept, extensions)
                return Tree(root, scope, shown, sources, other, "git", dropped)
    if not tried and env is not None:
        again = _walked_again(env, root, base_rel, extensions)
    if again is None:
        again = _walk(scope, base_rel, Listings(env, root, extensions), extensions)
    sources, other, skipped = again
    return Tree(root, scope, shown, sources, other, "walk", skipped)
