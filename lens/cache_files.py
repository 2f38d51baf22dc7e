"""Where the lens's cache lives (``$RELORE_CODE_CACHE``, else ``$XDG_CACHE_HOME/relore/code``,
else ``~/.cache/relore/code``; a directory per tree root) and how its files are written
(atomically, by rename) and read. Stdlib modules a write needs are imported by the write:
a cached answer writes nothing."""

from __future__ import annotations

import contextlib
import marshal
import os


def directory(env: dict[str, str] | os._Environ) -> str:
    """The cache's directory, normalised (strings, not pathlib: its import, ~5 ms, would be
    most of a cached answer's imports)."""
    if env.get("RELORE_CODE_CACHE"):
        return os.path.normpath(os.path.expanduser(env["RELORE_CODE_CACHE"]))
    if env.get("XDG_CACHE_HOME"):
        base = os.path.expanduser(env["XDG_CACHE_HOME"])
        return os.path.normpath(os.path.join(base, "relore", "code"))
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.normpath(os.path.join(home, ".cache", "relore", "code"))


def _sha256(data: bytes) -> str:
    """SHA-256 in hex, by the interpreter's own module where it has one: hashlib loads
    OpenSSL first, ~3 ms of every cached answer's start."""
    try:
        from _sha2 import sha256  # Python 3.12 on
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return sha256(data).hexdigest()


def root_directory(env: dict[str, str] | os._Environ, root: str) -> str:
    """Where one tree root's cache lives."""
    digest = _sha256(root.encode("utf-8", "surrogateescape"))[:24]
    return os.path.join(directory(env), digest)


def _token() -> str:
    import secrets  # here: a cached answer writes nothing

    return secrets.token_hex(8)


def write_atomic(path: str, blob: bytes) -> None:
    import tempfile  # here: a cached answer writes nothing

    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".marshal")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _load(path: str):
    try:
        return marshal.loads(read_bytes(path))
    except (OSError, EOFError, ValueError, TypeError):
        return None
