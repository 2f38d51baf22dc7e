"""Postgres as relore names and reaches it: the database and its roles,
``DatabaseError``, where an embedded cluster keeps its files under ``$RELORE_HOME``
(``EmbeddedPaths``), and connecting with a one-line error that says what to do."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import psycopg

from relore.operate import migrations
from relore.operate.pgpass import read_passfile

DATABASE_NAME = "relore"
SUPERUSER = "postgres"  # the embedded cluster's bootstrap superuser: lifecycle only
WRITER = "relore_writer"  # the embedded cluster's day-to-day role (extract, dbt); not super
ROLES = (SUPERUSER, WRITER, migrations.READER_ROLE)


# A password file that is never there: libpq skips it silently (/dev/null draws a warning).
NO_PASSFILE = "/nonexistent/relore-no-pgpass"


class DatabaseError(RuntimeError):
    """A database that cannot be reached or started, with what to do about it: ``str()`` is
    the whole sentence; ``what`` and ``hint`` its two halves, for a caller that says what to
    do in its own place (``relored doctor``'s action column)."""

    def __init__(self, what: str, hint: str = "") -> None:
        super().__init__(f"{what}; {hint}" if hint else what)
        self.what, self.hint = what, hint


@dataclass(frozen=True)
class EmbeddedPaths:
    home: Path

    @property
    def data(self) -> Path:
        return self.home / "pgdata"

    @property
    def run(self) -> Path:
        return self.home / "run"

    @property
    def log(self) -> Path:
        return self.home / "postgres.log"

    @property
    def passwords(self) -> Path:
        """Every role's password, libpq password-file format, mode 0600."""
        return self.home / "pgpass"

    @property
    def hba(self) -> Path:
        return self.data / "pg_hba.conf"

    def password(self, user: str) -> str | None:
        return read_passfile(self.passwords).get(user)

    @property
    def made(self) -> bool:
        """Has ``relored db start`` made a cluster here (its passwords, or its data)?"""
        return self.passwords.exists() or (self.data / "PG_VERSION").exists()

    def require_made(self) -> None:
        """A DatabaseError in one line naming ``RELORE_HOME`` unless :attr:`made`: nothing
        prints a URL to a home that does not exist."""
        if not self.made:
            raise DatabaseError(
                f"no relore database in {self.home} (RELORE_HOME unset: the first .relore "
                "from here up, else relore's project root)",
                "run `relored db start` from the project root, or set RELORE_HOME to the "
                "home it made (RELORE_DATABASE_URL for another server)",
            )

    def url(
        self, user: str = SUPERUSER, database: str = DATABASE_NAME, *, with_password: bool = True
    ) -> str:
        """``user``'s URL with its password (the superuser's by default: lifecycle only)."""
        password = self.password(user) if with_password else None
        auth = f"{user}:{quote(password, safe='')}" if password else user
        return f"postgresql://{auth}@/{database}?host={quote(str(self.run), safe='/')}"

    def writer_url(self, database: str = DATABASE_NAME) -> str:
        return self.url(WRITER, database)

    def reader_url(self, database: str = DATABASE_NAME) -> str:
        return self.url(migrations.READER_ROLE, database)

    @classmethod
    def from_url(cls, url: str) -> EmbeddedPaths | None:
        """The embedded cluster a URL points at: its host is a ``<home>/run`` socket
        directory with the passwords file beside it. None for any other server."""
        found = re.search(r"[?&]host=([^&]+)", url)
        if not found:
            return None
        run = Path(unquote(found.group(1)))
        if not run.is_absolute() or run.name != "run":
            return None
        paths = cls(run.parent)
        return paths if paths.passwords.exists() else None


def describe(url: str) -> str:
    """A URL fit for printing: the password masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))


def connect(url: str, **kwargs) -> psycopg.Connection:
    try:
        return psycopg.connect(url, connect_timeout=10, **kwargs)
    except psycopg.OperationalError as exc:
        hint = (
            "start it with `relored db start`"
            if "host=" in url and "/run" in unquote(url)
            else "check RELORE_DATABASE_URL"
        )
        raise DatabaseError(f"cannot connect to {describe(url)}: {exc}".strip(), hint) from None
