"""Where relore keeps things on disk, for every process that must agree. Stdlib only.

``$RELORE_HOME`` (default ``./.relore``) holds the embedded database; the working clones
live in ``$RELORE_CLONES_DIR`` (default ``$RELORE_HOME/clones``) as ``<owner>/<name>``,
lower-cased because GitHub names are case-insensitive. ``relored clone`` writes there and
``relored serve`` reads there, so both resolve it here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from relore.contract.patterns import check_repo


def relore_home(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("RELORE_HOME") or Path.cwd() / ".relore").resolve()


def clones_root(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("RELORE_CLONES_DIR"):
        return Path(env["RELORE_CLONES_DIR"]).expanduser().resolve()
    return relore_home(env) / "clones"


def clone_dir(repo: str, env: Mapping[str, str] | None = None) -> Path:
    """Where the clone of ``repo`` lives."""
    owner, name = check_repo(repo)
    return clones_root(env) / owner.lower() / name.lower()
