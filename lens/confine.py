"""What the code lens may read: its tree, never through a symbolic link.

The tree is untrusted: it may commit symbolic links (git mode 120000) to a file outside it
(``~/.pgpass``, ``/etc/passwd``) or to a directory outside (``root -> /``). The lens follows
none, not even one that stays inside the tree:

- **a path the caller names** (PATH, ``--focus``) is taken lexically (``..`` removed as
  written) and must reach its target through no symbolic link below where it leaves the
  caller's directory; with ``within`` (``relore mcp``: the directory the server was started
  in) it must also lie inside that directory. :func:`resolve` returns it as the filesystem
  names it (``realpath``), or refuses it with :class:`OutOfTree`: one line, exit status 2.
- **the files of the tree** are never a link: ``listing.py`` lists none (a walk counts a
  link as another file and never enters one; ``git ls-files`` lists links, and the scan's
  ``lstat`` finds them not regular), and every file is opened by :class:`Beneath`, which
  opens it with ``O_NOFOLLOW`` (never blocking: a FIFO is not read) only when each
  directory between the tree's root and it is a directory, not a link (one ``lstat`` per
  directory per run).
- **the documentation** ``docs.py`` reads is opened by :func:`read_regular` too.

Standard library only.
"""

from __future__ import annotations

import errno
import os
import stat

from relore.contract import sanitize

_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NOCTTY", 0)
)


class PathNotFound(RuntimeError):
    """A path the caller named that the lens cannot read (the CLI's exit status 2)."""


class OutOfTree(PathNotFound):
    """A path that leads through a symbolic link, or out of the tree the lens may read."""


def _shown(path: str) -> str:
    return sanitize.fence(sanitize.flat(path))


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _first_link(here: str, path: str) -> str | None:
    """The first symbolic link on the way ``path`` is written, from ``here``."""
    at = here if not os.path.isabs(path) else os.sep
    for part in path.split(os.sep):
        if part in ("", "."):
            continue
        at = os.path.dirname(at) if part == ".." else os.path.join(at, part)
        if os.path.islink(at):
            return at
    return None


def resolve(path: str, cwd: str | None = None, within: str | None = None) -> str:
    """``path`` (relative to ``cwd``, else the working directory) as the filesystem names
    it, once it is known to lead through no symbolic link below where it leaves ``cwd``
    (with ``within``: below ``within``, and never out of it). ``OutOfTree`` otherwise;
    ``PathNotFound`` when there is nothing there. Read as written (``a/link/..`` is where
    the filesystem takes it, not ``a``) and as normalised, both must name one place."""
    here = os.path.abspath(cwd or os.getcwd())
    written = os.path.join(here, path)
    full = os.path.abspath(written)
    if within is not None:
        anchor = os.path.abspath(within)
        if not _under(full, anchor):
            raise OutOfTree(
                f"{_shown(path)} is outside the tree this server reads ({_shown(anchor)}): "
                "name a path inside it"
            )
    else:
        anchor = os.path.commonpath([here, full])
    if not os.path.lexists(full):
        raise PathNotFound(f"no such file or directory: {path}")
    rest = os.path.relpath(full, anchor)
    real_anchor = os.path.realpath(anchor)
    expected = real_anchor if rest == "." else os.path.join(real_anchor, rest)
    if os.path.realpath(written) != expected:
        link = _first_link(here, path) or full
        raise OutOfTree(
            f"{_shown(path)} leads through the symbolic link {_shown(link)}: the code lens "
            "follows no link (name the path it points at, inside the tree)"
        )
    return expected


def read_regular(path: str, limit: int | None = None) -> tuple[bytes, bool]:
    """A regular file's bytes (at most ``limit``) and whether there were more; ``OSError``
    when ``path`` is a symbolic link, not a regular file (a FIFO, a device: never waited
    on), or cannot be read. One ``fstat`` gives the size, so a file is usually one read."""
    handle = os.open(path, _FLAGS)
    try:
        st = os.fstat(handle)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        cap = (1 << 62) if limit is None else limit + 1
        want = min(st.st_size + 1, cap)
        chunks = []
        size = 0
        while want > 0:
            chunk = os.read(handle, want)
            chunks.append(chunk)
            size += len(chunk)
            if len(chunk) < want:
                break  # a short read of a regular file: its end
            want = min(1 << 20, cap - size)  # it grew since the fstat
    finally:
        os.close(handle)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if limit is not None and len(data) > limit:
        return data[:limit], True
    return data, False


class Beneath:
    """Files under ``root`` (a directory as the filesystem names it, ``resolve``'s), read
    only through directories: each directory between ``root`` and a file is ``lstat``'ed
    once (per instance: make one per run) and must be a directory, never a link."""

    def __init__(self, root: str):
        self.root = root.rstrip(os.sep) or os.sep
        self.prefix = self.root if self.root.endswith(os.sep) else self.root + os.sep
        self.known = {self.root}

    def read(self, path: str, limit: int | None = None) -> tuple[bytes, bool]:
        """``read_regular`` of ``path`` (a path under ``root``); ``OSError`` when a directory
        on its way is a link, or it is outside ``root``."""
        directory = path[: path.rfind(os.sep)] or os.sep
        if directory not in self.known:
            self._through(directory)
        return read_regular(path, limit)

    def _through(self, directory: str) -> None:
        pending = []
        while directory not in self.known:
            if not directory.startswith(self.prefix):
                raise OSError(errno.EXDEV, "outside the tree", directory)
            pending.append(directory)
            directory = directory[: directory.rfind(os.sep)] or os.sep
        for below in reversed(pending):
            if not stat.S_ISDIR(os.lstat(below).st_mode):
                raise OSError(errno.ELOOP, "a symbolic link on the way", below)
            self.known.add(below)
