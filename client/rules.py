"""``relore rules``: the request's parameters and the session a terminal shares. Stdlib only.

A session is what stops the daemon sending a rule twice. ``--session ID`` names it; else
``RELORE_SESSION``; else the POSIX session of the calling process (``os.getsid``), so every
command run from one terminal, or from one agent's process tree, shares a session without
configuration. A new terminal (or a context reset, with ``--refresh``) starts afresh.

The daemon keeps no session: each reply carries ``session_token`` (what the session has been
served, signed by the daemon), which the client keeps per (session, repository) and sends
back with the next request, so any worker or replica behind ``RELORE_API`` answers it alike.
Tokens live in ``$RELORE_STATE_DIR``, else ``$XDG_STATE_HOME/relore/rules-sessions``, else
``~/.local/state/relore/rules-sessions``: one 0600 file per session, named by a digest of its
id; files unused for a day are removed. Two commands of one session running at once keep the
later one's token (a rule the other was sent may be sent again).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from relore.contract import patterns

STALE_SECONDS = 24 * 60 * 60  # a session file unused this long is removed


def default_session(env: Mapping[str, str]) -> str:
    explicit = env.get("RELORE_SESSION")
    if explicit:
        return explicit
    try:
        anchor = f"sid:{os.getsid(0)}"
    except (AttributeError, OSError):  # no POSIX sessions (Windows)
        anchor = f"ppid:{os.getppid()}"
    uid = getattr(os, "getuid", lambda: 0)()
    return "term-" + hashlib.sha256(f"{uid}:{anchor}".encode()).hexdigest()[:16]


def valid_session(value: str) -> bool:
    return patterns.is_session(value)


def state_dir(env: Mapping[str, str]) -> Path:
    if env.get("RELORE_STATE_DIR"):
        return Path(env["RELORE_STATE_DIR"]).expanduser()
    if env.get("XDG_STATE_HOME"):
        return Path(env["XDG_STATE_HOME"]).expanduser() / "relore" / "rules-sessions"
    home = env.get("HOME") or str(Path.home())
    return Path(home) / ".local" / "state" / "relore" / "rules-sessions"


def _session_file(env: Mapping[str, str], session: str) -> Path:
    return state_dir(env) / (hashlib.sha256(session.encode("utf-8")).hexdigest()[:24] + ".json")


def _read(path: Path) -> dict:
    try:
        tokens = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return tokens if isinstance(tokens, dict) else {}


def stored_token(env: Mapping[str, str], session: str, repo: str) -> str | None:
    """The token this session's last reply for ``repo`` carried (None: none, or not one a
    daemon could have sent)."""
    token = _read(_session_file(env, session)).get(repo.lower())
    return token if isinstance(token, str) and patterns.is_session_token(token) else None


def keep_token(env: Mapping[str, str], session: str, repo: str, token: str) -> str | None:
    """Keep ``token`` for the session's next request; the reason when it could not be kept."""
    path = _session_file(env, session)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tokens = _read(path)
        tokens[repo.lower()] = token
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(tokens, fh)
        os.replace(temporary, path)
        _remove_stale(path.parent, keep=path)
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None


def _remove_stale(directory: Path, keep: Path) -> None:
    cutoff = time.time() - STALE_SECONDS
    for entry in directory.glob("*.json"):
        try:
            if entry != keep and entry.stat().st_mtime < cutoff:
                entry.unlink()
        except OSError:
            continue


def session_params(args, env: Mapping[str, str]) -> dict:
    """The session a rules request runs in and the token its last reply carried (the rest
    of the request is the command line's, as declared: ``client/cli.request``)."""
    session = args.session or default_session(env)
    return {"session": session, "session_token": stored_token(env, session, args.repo)}


def remember(env: Mapping[str, str], sent: dict, page: dict) -> str | None:
    """Keep the reply's token for the next request, and take it off the page: the client
    holds it, the reader of the page has no use for it. A warning when it was not kept."""
    token = page.pop("session_token", None)
    if not token or not patterns.is_session_token(token):
        return None
    failed = keep_token(env, sent["session"], sent["repo"], token)
    if failed:
        return f"could not keep the rules session ({failed}); rules already sent may be sent again"
    return None
