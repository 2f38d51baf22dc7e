"""``relored``'s exit statuses, one set for every verb: what cron, a probe or a script can
branch on. A number means one thing across verbs except where a verb's convention says
otherwise: ``doctor`` follows the monitoring-plugin convention (1 a warning, 2 a failure),
and ``embed`` exits 3 when the encoder cannot run. Those are aliases here, by their names."""

from __future__ import annotations

import enum


class ExitStatus(enum.IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    PARTIAL = 3
    INTERRUPTED = 130
    # doctor (monitoring-plugin convention)
    CHECK_WARNED = 1
    CHECK_FAILED = 2
    # embed
    ENCODER_UNAVAILABLE = 3


EXIT_STATUSES = {
    "OK": "done (doctor: every check passed)",
    "ERROR": "the verb failed (doctor: CHECK_WARNED, a check warns and none fails)",
    "USAGE": "a bad argument (doctor: CHECK_FAILED, a check fails)",
    "PARTIAL": "some repositories or passes failed, the rest landed; a clone without its "
    "rename pairs (embed: ENCODER_UNAVAILABLE, the encoder cannot run)",
    "INTERRUPTED": "stopped by Ctrl-C",
}
