"""Ages and dates: an age is for reading, a date is for citing; every hit carries both."""

from __future__ import annotations

from datetime import UTC, datetime


def parse(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def age(value: str | datetime | None, now: datetime | None = None) -> str:
    """A compact age: 45s, 12m, 5h, 3d, 8mo, 2y."""
    when = parse(value)
    if when is None:
        return "?"
    now = now or datetime.now(UTC)
    seconds = max(0, int((now - when).total_seconds()))
    for unit, size in (
        ("y", 365 * 86400),
        ("mo", 30 * 86400),
        ("d", 86400),
        ("h", 3600),
        ("m", 60),
    ):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def date(value: str | datetime | None) -> str | None:
    when = parse(value)
    return when.date().isoformat() if when else None


def iso(value: datetime | None) -> str | None:
    """A timestamp as the pages carry it (ISO 8601), or None."""
    return value.isoformat() if value is not None else None
