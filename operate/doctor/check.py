"""One check's result: its level (OK, WARN, FAIL), the line it prints, and the exit
status a set of them makes (the monitoring-plugin convention)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from relore.operate.exits import ExitStatus

OK, WARN, FAIL = "OK", "WARN", "FAIL"
EXIT_CODES = {OK: ExitStatus.OK, WARN: ExitStatus.CHECK_WARNED, FAIL: ExitStatus.CHECK_FAILED}


@dataclass(frozen=True)
class Check:
    level: str
    name: str
    detail: str
    action: str = ""

    def line(self) -> str:
        text = f"{self.level:<4} {self.name}: {self.detail}"
        return f"{text} — {self.action}" if self.action else text


def exit_code(checks: Iterable[Check]) -> int:
    return max((EXIT_CODES[c.level] for c in checks), default=ExitStatus.OK)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    seconds = max(0.0, float(seconds))
    if seconds < 120:
        return f"{seconds:.0f}s ago"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f}m ago"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f}h ago"
    return f"{seconds / 86400:.1f}d ago"


def _short(text: str | None, limit: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
