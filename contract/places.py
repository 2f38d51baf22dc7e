"""Where relore keeps things on disk, for every process that must agree. Stdlib only.

``$RELORE_HOME`` holds the embedded database. Unset, it is found as git finds its repository:
from the working directory up, the first directory holding ``.relore``, or relore's dbt
project root (a ``dbt_project.yml`` saying ``profile: relore``), whose ``.relore`` it is
whether or not it exists yet — dbt, run from that root, computes ``$PWD/.relore`` in
``profiles.yml``, so relored and dbt land on the same home from anywhere inside the checkout.
Nothing found: ``./.relore`` (where ``relored db start`` makes one); a command that needs an
existing home says so, naming ``RELORE_HOME`` (``operate.database.EmbeddedPaths.require_made``).

The working clones live in ``$RELORE_CLONES_DIR`` (default ``$RELORE_HOME/clones``) as
``<owner>/<name>``, lower-cased because GitHub names are case-insensitive. ``relored clone``
writes there and ``relored serve`` reads there, so both resolve it here.

An encoder model no package ships ready (all-mpnet-base-v2) lives in ``$RELORE_MODELS_DIR``
(default ``share/relore/models`` under the Python environment relore is installed in, so the
files go with the software, not with a database's home): ``relored encoder install`` writes
there, ``relored embed`` and ``relored serve`` read there.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path

from relore.contract.patterns import check_repo

HOME_DIR = ".relore"
# a dbt project whose profile is relore's (profiles.yml): the checkout's root
_RELORE_PROFILE = re.compile(r"""^profile:\s*["']?relore["']?\s*(#.*)?$""", re.MULTILINE)


def relore_home(env: Mapping[str, str] | None = None) -> Path:
    """``$RELORE_HOME``; else the home :func:`find_home` finds from the working directory;
    else ``./.relore``."""
    env = os.environ if env is None else env
    if env.get("RELORE_HOME"):
        return Path(env["RELORE_HOME"]).resolve()
    here = Path.cwd()
    return (find_home(here) or here / HOME_DIR).resolve()


def find_home(start: Path) -> Path | None:
    """From ``start`` up: the first ``.relore`` directory, or relore's project root's
    ``.relore`` (existing or not: where dbt run from that root looks). None: neither."""
    for directory in (start, *start.parents):
        try:
            if (directory / HOME_DIR).is_dir() or _is_relore_project(directory):
                return directory / HOME_DIR
        except OSError:  # a parent we may not search: as git does, stop looking there
            return None
    return None


def _is_relore_project(directory: Path) -> bool:
    project = directory / "dbt_project.yml"
    if not project.is_file():
        return False
    with open(project, encoding="utf-8", errors="replace") as f:
        return _RELORE_PROFILE.search(f.read(65536)) is not None


def clones_root(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("RELORE_CLONES_DIR"):
        return Path(env["RELORE_CLONES_DIR"]).expanduser().resolve()
    return relore_home(env) / "clones"


def models_root(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("RELORE_MODELS_DIR"):
        return Path(env["RELORE_MODELS_DIR"]).expanduser().resolve()
    return Path(sys.prefix) / "share" / "relore" / "models"


def clone_dir(repo: str, env: Mapping[str, str] | None = None) -> Path:
    """Where the clone of ``repo`` lives."""
    owner, name = check_repo(repo)
    return clones_root(env) / owner.lower() / name.lower()
