"""``relore``'s exit statuses: what a caller (an agent, a script) can branch on. Stdlib only."""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    DAEMON_DOWN = 3
    VERSION_MISMATCH = 4
    NOT_READY = 5
    NOT_INDEXED = 6


EXIT_STATUSES = {
    ExitStatus.OK: "an answer (an empty page is an answer)",
    ExitStatus.ERROR: "the daemon refused or failed the request",
    ExitStatus.USAGE: "a bad argument (map/defs/refs: a PATH that is not there, leads through "
    "a symbolic link, or is outside the tree `relore mcp` reads), or RELORE_API that is not "
    "an http(s) URL",
    ExitStatus.DAEMON_DOWN: "no relore daemon at RELORE_API (nothing listening, another "
    "server, or a redirect elsewhere)",
    ExitStatus.VERSION_MISMATCH: "the daemon runs another version",
    ExitStatus.NOT_READY: "the daemon cannot answer yet (503: no index, no clone, database "
    "down or busy)",
    ExitStatus.NOT_INDEXED: "the repository or thread is not indexed there",
}


class Refused(Exception):
    """A verb that ends without a page: the line ``relore`` prints on stderr and the exit
    status it returns. ``relore mcp`` turns the same two into a tool error."""

    def __init__(self, status: ExitStatus, line: str):
        super().__init__(line)
        self.status = status
        self.line = line
