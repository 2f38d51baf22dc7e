"""Session state for rule serving, and the served-events log.

A session is what one agent has been given: rule ids sent, titles listed, notes shown. It
lives in the serve process's memory, keyed by (session id, repository), expires after
``ttl`` seconds without use, and at most ``max_sessions`` are kept (the least recently used
goes first). A restart forgets every session: the next reply simply sends the rules again.

Every reply that sends something appends one line to the served-events log
(``RELORE_RULES_LOG``, default ``$RELORE_HOME/rules-served.jsonl``), which `relored rules
usage` reads. Nothing serves that file back: it is evidence of use, never of content.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path

from relore.contract.rules.choose import Served, SessionView

DEFAULT_TTL_SECONDS = 2 * 60 * 60
DEFAULT_MAX_SESSIONS = 10_000


class SessionStore:
    def __init__(
        self,
        ttl: float = DEFAULT_TTL_SECONDS,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.ttl = ttl
        self.max_sessions = max_sessions
        self.clock = clock
        self._sessions: OrderedDict[tuple[str, str], tuple[float, SessionView]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self, now: float) -> None:
        while self._sessions:
            key, (seen, _) = next(iter(self._sessions.items()))
            if now - seen <= self.ttl:
                break
            del self._sessions[key]

    def view(self, session: str | None, repo: str) -> SessionView:
        """A copy of the session's state (empty for no session or an expired one)."""
        if not session:
            return SessionView()
        with self._lock:
            self._expire(self.clock())
            entry = self._sessions.get((session, repo))
            if entry is None:
                return SessionView()
            state = entry[1]
            return SessionView(set(state.sent), set(state.listed), set(state.notes))

    def record(self, session: str | None, repo: str, served: Served) -> None:
        if not session:
            return
        with self._lock:
            now = self.clock()
            self._expire(now)
            key = (session, repo)
            entry = self._sessions.pop(key, None)
            state = entry[1] if entry else SessionView()
            if served.refresh:
                state = SessionView()
            state.sent.update(served.sent)
            state.listed.update(served.listed)
            state.notes.update(served.notes)
            self._sessions[key] = (now, state)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)


def log_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    explicit = env.get("RELORE_RULES_LOG")
    if explicit:
        return Path(explicit)
    home = Path(env.get("RELORE_HOME") or Path.cwd() / ".relore")
    return home / "rules-served.jsonl"


def session_digest(session: str | None) -> str | None:
    """Sessions are logged as a digest: the log counts sessions, it does not name them."""
    if not session:
        return None
    return hashlib.sha256(session.encode("utf-8")).hexdigest()[:12]


_log_lock = threading.Lock()


def append_event(path: Path, repo: str, session: str | None, reply: dict) -> None:
    """One line per reply that sent at least one rule."""
    if not reply["rules"]:
        return
    event = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "repo": repo,
        "session": session_digest(session),
        "sent": [r["id"] for r in reply["rules"]],
        "eligible": reply["eligible"],
        "tokens": reply["tokens"],
        "mode": reply["mode"],
        "refresh": reply["refresh"],
    }
    line = json.dumps(event, ensure_ascii=False) + "\n"
    with _log_lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)


def read_events(path: Path) -> list[dict]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # a torn last line after a crash; the rest still counts
    return events
