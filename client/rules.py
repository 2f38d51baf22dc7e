"""``relore rules``: the request's parameters and the session a terminal shares. Stdlib only.

A session is what stops the daemon sending a rule twice. ``--session ID`` names it; else
``RELORE_SESSION``; else the POSIX session of the calling process (``os.getsid``), so every
command run from one terminal, or from one agent's process tree, shares a session without
configuration. A new terminal (or a context reset, with ``--refresh``) starts afresh.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping

from relore.contract import patterns


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


def params(args, env: Mapping[str, str]) -> dict:
    return {
        "repo": args.repo,
        "file": list(args.files),
        "task": args.task,
        "include": list(args.include),
        "max_tokens": args.max_tokens,
        "refresh": "1" if args.refresh else None,
        "session": args.session or default_session(env),
    }
