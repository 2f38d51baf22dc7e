"""Where a figure came from: the commit, whether the tree held other work, the machine's load.

Every benchmark prints this beside its figures (``line()`` for text reports, ``facts()`` as
the ``measured_at`` key of JSON ones), so a figure copied into benchmarks/results/ carries
the commit it was measured at, and a run over uncommitted code says so.

    python benchmarks/provenance.py        # what the next run would say
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Code whose change changes a figure; prose (*.md) and the tests' own files do not.
MEASURED_CODE = ("benchmarks", "client", "contract", "extract", "macros", "models", "operate",
                 "serve", "snapshots", "tests/fixtures", "dbt_project.yml", "pyproject.toml")  # fmt: skip


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.rstrip() if done.returncode == 0 else ""


def facts() -> dict:
    """The commit, the measured code's uncommitted paths, the cores and the load average."""
    dirty = [line[3:] for line in _git("status", "--porcelain", "--", *MEASURED_CODE).splitlines()]
    return {
        "commit": _git("rev-parse", "--short", "HEAD") or "unknown (not a git checkout)",
        "uncommitted": [path for path in dirty if not path.endswith(".md")],
        "cores": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }


def line() -> str:
    """One line for a text report: ``measured at 1a2b3c4 (clean) on 2 cores, load …``."""
    f = facts()
    state = f"{len(f['uncommitted'])} uncommitted paths" if f["uncommitted"] else "clean"
    load = "/".join(f"{x:.2f}" for x in f["load_average"])
    return f"measured at {f['commit']} ({state}) on {f['cores']} cores, load {load}"


if __name__ == "__main__":
    print(line())
