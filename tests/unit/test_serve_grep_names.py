"""``grep`` and ``copies`` over a real git repository whose file names hold newlines, colons
and NUL-adjacent bytes: every match counted once, every path read whole."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from relore.serve.clone import copies, grep

NAMES = [
    "plain.py",
    "new\nline.py",
    "colon:12:fake.py",
    "--\nstarts-like-a-separator.py",
    "tab\there\x1b[31m.py",
]


def _repo(tmp_path: Path) -> Path:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    run = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, env=env, check=True)  # noqa: E731
    run("init", "-q", "-b", "main")
    (tmp_path / "base.py").write_text("class Base:\n    pass\n")
    for i, name in enumerate(NAMES):
        (tmp_path / name).write_text(
            f"x = 1\n# Copied from base.Base\nclass Copy{i}:\n    needle = {i}\n"
        )
    run("add", "-A")
    run("-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "files")
    return tmp_path


def test_grep_counts_a_match_once_whatever_its_file_name_holds(tmp_path):
    clone = _repo(tmp_path)
    request = {"repo": "o/n", "pattern": "needle", "fixed": True, "ignore_case": False,
               "path": None, "limit": 50}  # fmt: skip
    page = asyncio.run(grep.grep(request, clone))
    assert page["total"] == len(NAMES)
    assert page["files"] == len(NAMES)
    assert sorted(m["path"] for m in page["matches"]) == sorted(NAMES)
    assert {m["line"] for m in page["matches"]} == {4}


def test_copies_reads_every_marker_and_its_definition_whatever_the_file_name(tmp_path):
    clone = _repo(tmp_path)
    page = asyncio.run(copies.copies({"repo": "o/n", "name": "base.Base", "limit": 50}, clone))
    assert page["total"] == len(NAMES)
    assert sorted(row["path"] for row in page["copies"]) == sorted(NAMES)
    assert all(row["copy"] and row["copy"]["line"] == 3 for row in page["copies"])
