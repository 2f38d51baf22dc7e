"""Which clone a request reads.

A caller's inputs (``repo``, a ``path`` relative to the repository root, a ``line``, a name)
are parsed by ``relore.serve.inputs``: absolute paths, ``..`` segments, NUL and control
characters are refused with a 400 before git ever runs. A repository with no clone is a 503
that names the command that makes one.
"""

from __future__ import annotations

import os
from pathlib import Path

from relore.contract import places
from relore.serve.errors import Unavailable


class NoClone(Unavailable):
    """No working clone of the repository on this daemon (503, with the ``command``)."""

    def __init__(self, repo: str):
        self.repo = repo
        self.command = f"relored clone --repo {repo}"
        super().__init__(
            f"no working clone of {repo} on this daemon: run `{self.command}` where "
            "`relored serve` runs (the conversation index does not need it; why, symbol, "
            "grep and copies do)",
            command=self.command,
        )


def clone_for(repo_name: str, env=None) -> Path:
    env = os.environ if env is None else env
    where = places.clone_dir(repo_name, env)
    if not (where / ".git").is_dir():
        raise NoClone(repo_name)
    return where
