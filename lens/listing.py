"""Which files are the tree: ``git ls-files`` under git, else a walk that keeps each
directory's listing between runs (as git's untracked cache does).

A listing is the directory's entries as the walk reads them: its source files (name and
language), how many other files (symbolic links among them), whether a project manifest is
there, and its subdirectories. It is kept in ``dirs.marshal`` beside the root's records
(``cache.root_directory``), keyed by the directory's ``stat`` (mtime, ctime, inode,
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
"""

from __future__ import annotations

import contextlib
import marshal
import os
import stat
import time

from relore.lens import cache, registry
from relore.lens.confine import PathNotFound, resolve

__all__ = ["PathNotFound", "Tree", "walk"]

FORMAT = 2  # 2: a symbolic link is another file, never a source nor entered
# a directory changed less than this long before it was listed is listed again next run
RACY_NS = 2_000_000_000
# A listing's fields: the directory's stat (its key; MTIME None: listed racily, never
# matches), its source files' names joined by NULs (sorted) and their languages, how many
# other files (symbolic links too), whether a manifest is among them, and its subdirectories'
# names joined by NULs (sorted).
MTIME, CTIME, INODE, DEVICE, SOURCES, LANGUAGES, OTHER, MANIFEST, SUBDIRS = range(9)

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


def _git_files(scope: str) -> list[str] | None:
    output = _output_of([*GIT_LS_FILES[:2], scope, *GIT_LS_FILES[2:]], timeout=60)
    if output is None:
        return None  # not ours to fix (no git, dubious ownership): fall back to a walk
    names = output.decode("utf-8", "surrogateescape").split("\0")
    return sorted(n for n in names if n)


def _output_of(argv: list[str], timeout: float) -> bytes | None:
    """``argv``'s standard output when it exits 0 within ``timeout``, run with no input
    and its errors dropped; None when it cannot run, fails or outlives ``timeout`` (then it
    is killed). A spawn, a pipe and a wait: importing ``subprocess`` (~9 ms) cost a cached
    answer under git more than git's run."""
    if not hasattr(os, "posix_spawnp"):
        import subprocess

        try:
            done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None
    import select

    deadline = time.monotonic() + timeout
    reading, writing = os.pipe()  # neither inherited: the child's stdout is a dup2
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, writing, 1),
        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
    ]
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    except OSError:
        os.close(reading)
        return None
    finally:
        os.close(writing)
    chunks: list[bytes] = []
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([reading], [], [], left)[0]:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return None
            chunk = os.read(reading, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reading)
    if not _exited_within(pid, max(0.0, deadline - time.monotonic())):
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return None
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return b"".join(chunks) if status == 0 else None


def _exit_status(argv: list[str], timeout: float) -> int | None:
    """``argv``'s exit status, run with no input and its output dropped; None when it
    cannot run or outlives ``timeout`` (then it is killed). A spawn and a wait: the
    ``subprocess`` module's import alone costs a cached answer more than git's run."""
    return _started(argv, timeout)()


def _started(argv: list[str], timeout: float):
    """``argv`` started as ``_exit_status`` runs it; returns what waits for its exit status
    (call it once), so the caller can work while it runs."""
    if not hasattr(os, "posix_spawnp"):
        import subprocess

        try:
            status = subprocess.run(
                argv, capture_output=True, timeout=timeout, check=False
            ).returncode
        except (OSError, subprocess.SubprocessError):
            status = None
        return lambda: status
    quiet = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    try:
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=quiet)
    except OSError:
        return lambda: None

    def status() -> int | None:
        if _exited_within(pid, timeout):
            return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return None

    return status


def _exited_within(pid: int, timeout: float) -> bool:
    """Whether child ``pid`` exits within ``timeout`` (not reaped): a wait on its pidfd
    where there is one (Linux), else polls."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        handle = None
    if handle is not None:
        import select

        try:
            return bool(select.select([handle], [], [], timeout)[0])
        finally:
            os.close(handle)
    deadline = time.monotonic() + timeout
    pause = 0.0005
    while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def _git_ignored(scope: str, root: str) -> bool:
    """A path the caller named inside an ignored directory is walked, not listed by git
    (which would list nothing there)."""
    return _asking_ignored(scope, root)()


def _asking_ignored(scope: str, root: str):
    """``_git_ignored`` asked of git now; returns what waits for the answer (call it once)."""
    if scope == root:
        return lambda: False
    argv = ["git", "-C", root, "check-ignore", "-q", "--", os.path.relpath(scope, root)]
    status = _started(argv, timeout=30)
    return lambda: status() == 0


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


def path_for(env, root: str) -> str:
    return os.path.join(cache.root_directory(env, root), "dirs.marshal")


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
            data = marshal.loads(cache.read_bytes(self.path))
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
            cache.write_atomic(path, walked.blob(self.signature, self.root))
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
            cache.write_atomic(self.path, marshal.dumps(blob))
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
        data = marshal.loads(cache.read_bytes(walked_path_for(env, root)))
        return data.get("base") if type(data) is dict else None
    except (OSError, EOFError, ValueError, TypeError):
        return None


def _walked_again(env, root: str, base: str, extensions: dict[str, str]):
    """The kept walk of ``base`` (``Walked``) when no directory's stat changed since:
    ``((paths, languages), other, skipped)``; else None (walk)."""
    try:
        data = marshal.loads(cache.read_bytes(walked_path_for(env, root)))
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
