"""libpq's password file (``$RELORE_HOME/pgpass``, ``~/.pgpass``): its line format,
reading it, and writing a private file (mode 0600) in place of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

PORT = 5432  # the socket is $RELORE_HOME/run/.s.PGSQL.5432


def _pgpass_escape(field: str) -> str:
    return field.replace("\\", "\\\\").replace(":", "\\:")


def _pgpass_fields(line: str) -> list[str]:
    """A password-file line split on unescaped colons, escapes undone."""
    fields, current, escaped = [], [], False
    for char in line:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ":":
            fields.append("".join(current))
            current = []
        else:
            current.append(char)
    fields.append("".join(current))
    return fields


def _pgpass_line(host: str, user: str, password: str) -> str:
    return ":".join(_pgpass_escape(f) for f in (host, str(PORT), "*", user, password))


def read_passfile(path: Path) -> dict[str, str]:
    """user -> password from a libpq password file (the first entry for a user wins)."""
    try:
        text = path.read_text()
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return {}
    found: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = _pgpass_fields(line)
        if len(fields) == 5:
            found.setdefault(fields[3], fields[4])
    return found


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, mode 0600 from the first byte."""
    target = path.resolve()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def libpq_passfile(env: dict[str, str] | None = None) -> Path:
    """The password file libpq reads: ``$PGPASSFILE``, else ``~/.pgpass``."""
    env = os.environ if env is None else env
    if env.get("PGPASSFILE"):
        return Path(env["PGPASSFILE"])
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".pgpass"
