"""``relored doctor``: is this deployment healthy, and if not, what to do about it.

Each check is one line, ``LEVEL name: detail — what to do``, LEVEL being OK, WARN or FAIL.
The exit status follows the monitoring-plugin convention, so a cron wrapper, a Kubernetes
probe or Nagios can use it as it is: 0 every check OK, 1 a WARN and no FAIL, 2 any FAIL.

The doctor reads; it changes nothing. It connects with the writer's URL (it does not
migrate), and once as the reader role, inside a transaction it always rolls back, to prove
the reader cannot write. It also tries to log in with no password as the writer, the reader
and ``postgres`` (as a local attacker would), and checks who else can reach the socket and
an embedded cluster's files.

``check`` holds a check's result and the exit status; ``access`` who can reach the database;
``extracts`` the writer's runs; ``derived`` the build, authority and the semantic tier; ``schedule`` which repository
the cycle left behind and why; ``run``
runs them all and prints them.
"""

from __future__ import annotations

from relore.operate.doctor.check import FAIL, OK, WARN, Check, exit_code
from relore.operate.doctor.run import main, render, run_checks

__all__ = ["FAIL", "OK", "WARN", "Check", "exit_code", "main", "render", "run_checks"]
