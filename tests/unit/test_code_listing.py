"""The code lens's walk without git keeps each directory's listing between runs
(``relore.lens.listing``): the failures such a cache would cause, one test each.

A listing is reused while its directory's stat is unchanged, so each test first ages the
tree's directories (an mtime an hour back: older than any racy window), runs once, changes
the tree as a user would, and checks the next run sees the change.
"""

from __future__ import annotations

import marshal
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from fixtures.code_tree import write_tree

from relore.lens import git_files, index, kept_listings, listing

HOUR_NS = 3600 * 1_000_000_000
SAID_BY_THE_CACHE = ("parsed", "from_cache", "cache")


def _age(root: Path) -> None:
    """Every directory's mtime an hour back, as an untouched tree's would be."""
    past = time.time_ns() - HOUR_NS
    for directory, _dirs, _files in os.walk(root):
        os.utime(directory, ns=(past, past))


def _defined(root: Path, env: dict, name: str) -> list[str]:
    page = index.defs(name, str(root), env)
    return sorted(os.path.relpath(d["path"], root) for d in page["definitions"])


class _Listings:
    """Counts the directories the walk lists (``os.scandir`` under ``root``)."""

    def __init__(self, monkeypatch, root: Path):
        self.root = str(root)
        self.paths: list[str] = []
        real = os.scandir

        def counted(path="."):
            if str(path).startswith(self.root):
                self.paths.append(str(path))
            return real(path)

        monkeypatch.setattr(listing.os, "scandir", counted)


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


@pytest.fixture
def tree(tmp_path):
    root = write_tree(
        tmp_path / "tree",
        {
            "top.py": "def top():\n    pass\n",
            "pkg/a.py": "def alpha():\n    pass\n",
            "pkg/sub/b.py": "def beta():\n    pass\n",
            "other/c.py": "def gamma():\n    pass\n",
        },
    )
    _age(root)
    return root


def test_an_unchanged_directory_is_not_listed_again(tree, env, monkeypatch):
    first = index.repo_map(str(tree), env)
    listed = _Listings(monkeypatch, tree)
    again = index.repo_map(str(tree), env)
    assert listed.paths == []
    assert again["entries"] == first["entries"]
    assert {k: v for k, v in again["files"].items() if k not in ("parsed", "from_cache")} == {
        k: v for k, v in first["files"].items() if k not in ("parsed", "from_cache")
    }


def test_a_kept_listing_gives_the_page_a_fresh_walk_gives(tree, env, tmp_path, monkeypatch):
    write_tree(
        tree,
        {
            "node_modules/lib/x.js": "function vendored() {}\n",
            "pkg/__pycache__/keep.py": "def vendored(): pass\n",
            "proj/pyproject.toml": "",
            "proj/build/lib/copy.py": "def copied(): pass\n",
            "proj/src/m.py": "def m(): pass\n",
            "README.md": "words\n",
            "web/app.ts": "export function app() {}\n",
        },
    )
    (tree / "pkg" / "linked_dir").symlink_to(tree / "other")
    (tree / "pkg" / "linked.py").symlink_to(tree / "other" / "c.py")
    (tree / "proj" / "setup.py").symlink_to(tree / "proj" / "pyproject.toml")
    _age(tree)
    first = index.repo_map(str(tree), env)
    listed = _Listings(monkeypatch, tree)
    kept = index.repo_map(str(tree), env)
    assert listed.paths == []
    fresh = index.repo_map(str(tree), {**env, "RELORE_CODE_CACHE": str(tmp_path / "fresh")})
    for page in (first, kept):
        assert page["entries"] == fresh["entries"]
        assert {k: v for k, v in page["files"].items() if k not in SAID_BY_THE_CACHE} == {
            k: v for k, v in fresh["files"].items() if k not in SAID_BY_THE_CACHE
        }
    assert fresh["files"]["skipped_dir_examples"] == [
        "node_modules",
        "pkg/__pycache__",
        "proj/build",
    ]


def test_a_file_added_to_an_unchanged_directory_listing_is_found(tree, env):
    assert _defined(tree, env, "delta") == []
    (tree / "pkg" / "d.py").write_text("def delta():\n    pass\n")
    assert _defined(tree, env, "delta") == ["pkg/d.py"]


def test_a_file_added_to_a_subdirectory_is_found_though_its_parents_are_unchanged(tree, env):
    assert _defined(tree, env, "delta") == []
    parent = (tree / "pkg").stat().st_mtime_ns
    (tree / "pkg" / "sub" / "d.py").write_text("def delta():\n    pass\n")
    assert (tree / "pkg").stat().st_mtime_ns == parent  # only sub/'s mtime moved
    assert _defined(tree, env, "delta") == ["pkg/sub/d.py"]


def test_a_file_deleted_from_a_listed_directory_is_gone_from_the_answer(tree, env):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    (tree / "pkg" / "sub" / "b.py").unlink()
    assert _defined(tree, env, "beta") == []
    assert index.repo_map(str(tree), env)["files"]["source_files"] == 3


def test_a_file_changed_in_a_listed_directory_is_read_again(tree, env):
    assert _defined(tree, env, "alpha") == ["pkg/a.py"]
    mtime = (tree / "pkg").stat().st_mtime_ns
    (tree / "pkg" / "a.py").write_text("def renamed():\n    pass\n")  # in place
    assert (tree / "pkg").stat().st_mtime_ns == mtime  # the listing's key is unchanged
    assert _defined(tree, env, "alpha") == []
    assert _defined(tree, env, "renamed") == ["pkg/a.py"]


def test_a_directory_added_under_a_listed_directory_is_walked(tree, env):
    assert _defined(tree, env, "delta") == []
    write_tree(tree, {"pkg/new/deeper/d.py": "def delta():\n    pass\n"})
    assert _defined(tree, env, "delta") == ["pkg/new/deeper/d.py"]


def test_a_renamed_directory_is_found_under_its_new_name_only(tree, env):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    os.rename(tree / "pkg" / "sub", tree / "other" / "moved")
    assert _defined(tree, env, "beta") == ["other/moved/b.py"]


def test_a_deleted_directory_leaves_no_answer_and_no_listing(tree, env):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    (tree / "pkg" / "sub" / "b.py").unlink()
    (tree / "pkg" / "sub").rmdir()
    assert _defined(tree, env, "beta") == []
    kept = marshal.loads(Path(kept_listings.path_for(env, str(tree))).read_bytes())
    assert sorted(kept["dirs"]) == ["", "other/", "pkg/"]


def test_a_directory_replaced_by_another_with_the_same_mtime_is_listed_again(tree, env, tmp_path):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    old = (tree / "pkg" / "sub").stat()
    os.rename(tree / "pkg" / "sub", tmp_path / "gone")
    write_tree(tree, {"pkg/sub/e.py": "def epsilon():\n    pass\n"})
    os.utime(tree / "pkg" / "sub", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert (tree / "pkg" / "sub").stat().st_mtime_ns == old.st_mtime_ns
    assert _defined(tree, env, "beta") == []
    assert _defined(tree, env, "epsilon") == ["pkg/sub/e.py"]


def test_a_file_added_then_its_directorys_mtime_put_back_is_found(tree, env):
    """``touch -d``, ``rsync -t``, ``cp -p`` and archive tools set a directory's mtime back;
    its ctime still moves, and the listing's key holds both."""
    assert _defined(tree, env, "delta") == []
    old = (tree / "pkg").stat()
    (tree / "pkg" / "d.py").write_text("def delta():\n    pass\n")
    os.utime(tree / "pkg", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert (tree / "pkg").stat().st_mtime_ns == old.st_mtime_ns
    assert _defined(tree, env, "delta") == ["pkg/d.py"]


def test_a_change_within_the_listings_mtime_tick_is_seen(tree, env, monkeypatch):
    """A filesystem whose clock ticks coarsely: every change to a directory leaves it the
    mtime (and ctime) it had. A listing made in the same tick as that mtime is not kept
    (git's racily clean entries), so an entry added after it is still found."""
    tick = time.time_ns()
    real = os.lstat  # the walk lstats a directory: a link is never entered

    def coarse(path, *args, **kwargs):
        st = real(path, *args, **kwargs)
        if not stat.S_ISDIR(st.st_mode):
            return st
        fields = {k: getattr(st, k) for k in dir(st) if k.startswith("st_")}
        return SimpleNamespace(**{**fields, "st_mtime_ns": tick, "st_ctime_ns": tick})

    monkeypatch.setattr(listing.os, "lstat", coarse)
    trusting = {**env, "RELORE_CODE_CACHE": env["RELORE_CODE_CACHE"] + "-trusting"}
    with monkeypatch.context() as without_the_rule:
        without_the_rule.setattr(listing, "RACY_NS", 0)
        assert _defined(tree, trusting, "delta") == []
    assert _defined(tree, env, "delta") == []
    (tree / "pkg" / "d.py").write_text("def delta():\n    pass\n")
    assert coarse(tree / "pkg").st_mtime_ns == tick  # the change left no trace in the stat
    with monkeypatch.context() as without_the_rule:
        without_the_rule.setattr(listing, "RACY_NS", 0)
        assert _defined(tree, trusting, "delta") == []  # what the rule prevents
    assert _defined(tree, env, "delta") == ["pkg/d.py"]


def test_a_manifest_added_beside_build_output_skips_it_on_the_next_run(tree, env):
    write_tree(tree, {"proj/build/lib/copy.py": "def copied():\n    pass\n"})
    _age(tree)
    assert _defined(tree, env, "copied") == ["proj/build/lib/copy.py"]
    (tree / "proj" / "pyproject.toml").write_text("")
    assert _defined(tree, env, "copied") == []


def test_a_symlink_is_never_read_whatever_its_target_turns_into(tree, env, tmp_path):
    outside = tmp_path / "outside"
    (outside / "target").mkdir(parents=True)
    (outside / "target" / "inner.py").write_text("def zeta():\n    pass\n")
    (tree / "pkg" / "linked.py").symlink_to(outside / "target")
    _age(tree)
    assert _defined(tree, env, "zeta") == []  # a link to a directory is not entered
    (outside / "target" / "inner.py").unlink()
    (outside / "target").rmdir()  # the link's directory is untouched
    (outside / "target").write_text("def zeta():\n    pass\n")
    assert _defined(tree, env, "zeta") == []  # nor read once it leads to a file


def _spoiled(kept: dict, **fields) -> bytes:
    entry = list(kept["dirs"]["pkg/sub/"])
    for field, value in fields.items():
        entry[getattr(kept_listings, field)] = value
    return marshal.dumps({**kept, "dirs": {**kept["dirs"], "pkg/sub/": tuple(entry)}})


SPOILED = {
    "garbage": lambda kept: b"not marshal at all",
    "cut short": lambda kept: marshal.dumps(kept)[:-9],
    "a list": lambda kept: marshal.dumps([1, 2, 3]),
    "dirs not a dict": lambda kept: marshal.dumps({**kept, "dirs": 7}),
    "a listing too short": lambda kept: marshal.dumps({**kept, "dirs": {"pkg/sub/": (1, 2)}}),
    "names as a list": lambda kept: _spoiled(kept, SOURCES=["b.py"]),
    "an empty name": lambda kept: _spoiled(kept, SUBDIRS="\0"),
    "a name '.'": lambda kept: _spoiled(kept, SUBDIRS="."),
    "a name '..'": lambda kept: _spoiled(kept, SUBDIRS=".."),
    "a name not a string": lambda kept: _spoiled(kept, SUBDIRS=[7]),
    "an unknown language": lambda kept: _spoiled(kept, LANGUAGES=["cobol"]),
    "an unhashable language": lambda kept: _spoiled(kept, LANGUAGES=[["python"]]),
    "a count not a number": lambda kept: _spoiled(kept, OTHER="0"),
}


@pytest.mark.parametrize("spoil", SPOILED.values(), ids=SPOILED.keys())
def test_an_unreadable_listing_cache_is_dropped_and_rebuilt(tree, env, spoil):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    path = Path(kept_listings.path_for(env, str(tree)))
    path.write_bytes(spoil(marshal.loads(path.read_bytes())))
    # a directory changed: the kept walk cannot answer, the listings are read
    (tree / "pkg" / "sub" / "d.py").write_text("def delta():\n    pass\n")
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    assert _defined(tree, env, "delta") == ["pkg/sub/d.py"]
    assert index.repo_map(str(tree), env)["files"]["source_files"] == 5
    assert len(marshal.loads(path.read_bytes())["dirs"]) == 4  # written again whole


def test_a_listing_cache_naming_paths_outside_its_directory_is_not_followed(tree, env):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    path = Path(kept_listings.path_for(env, str(tree)))
    kept = marshal.loads(path.read_bytes())
    entry = list(kept["dirs"]["pkg/"])
    entry[kept_listings.SOURCES] += "\0../top.py"
    entry[kept_listings.LANGUAGES] += ["python"]
    entry[kept_listings.SUBDIRS] += "\0../other"
    kept["dirs"]["pkg/"] = tuple(entry)
    path.write_bytes(marshal.dumps(kept))
    Path(listing.walked_path_for(env, str(tree))).unlink()  # the listings are read
    page = index.repo_map(str(tree), env)
    assert page["files"]["source_files"] == 4
    assert _defined(tree, env, "top") == ["top.py"]


def test_under_git_a_path_added_to_gitignore_is_left_out_on_the_next_run(tree, env):
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    _age(tree)
    assert _defined(tree, env, "gamma") == ["other/c.py"]
    (tree / ".gitignore").write_text("other/\n")
    assert _defined(tree, env, "gamma") == []
    (tree / "other" / "d.py").write_text("def delta():\n    pass\n")
    (tree / ".gitignore").write_text("")
    assert _defined(tree, env, "delta") == ["other/d.py"]
    assert index.repo_map(str(tree), env)["files"]["listing"] == "git"


def test_a_path_inside_an_ignored_directory_keeps_its_listing_and_sees_changes(tree, env):
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text("pkg/\n")
    _age(tree)
    assert _defined(tree, env, "alpha") == []
    assert _defined(tree / "pkg", env, "alpha") == ["a.py"]
    (tree / "pkg" / "sub" / "d.py").write_text("def delta():\n    pass\n")
    assert _defined(tree / "pkg", env, "delta") == ["sub/d.py"]
    assert index.defs("delta", str(tree / "pkg"), env)["files"]["listing"] == "walk"


def test_a_path_ignored_no_more_is_listed_by_git_and_its_kept_walk_dropped(tree, env):
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text("pkg/\n")
    _age(tree)
    assert index.defs("alpha", str(tree / "pkg"), env)["files"]["listing"] == "walk"
    walked = Path(listing.walked_path_for(env, str(tree)))
    assert walked.exists()
    (tree / ".gitignore").write_text("")
    (tree / "pkg" / "d.py").write_text("def delta():\n    pass\n")
    _age(tree)
    page = index.defs("delta", str(tree / "pkg"), env)
    assert page["files"]["listing"] == "git" and len(page["definitions"]) == 1
    assert not walked.exists()


def test_walking_a_subdirectory_keeps_the_listings_beside_it(tree, env, monkeypatch):
    # under git, a path inside an ignored directory is walked with the git root as its root:
    # walks of different parts of it share one set of listings
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / ".gitignore").write_text("pkg/\n")
    _age(tree)
    index.repo_map(str(tree / "pkg"), env)
    (tree / "pkg" / "sub" / "d.py").write_text("def delta():\n    pass\n")
    _age(tree / "pkg" / "sub")
    assert index.repo_map(str(tree / "pkg" / "sub"), env)["total"] == 2  # sub/ listed again
    listed = _Listings(monkeypatch, tree)
    page = index.repo_map(str(tree / "pkg"), env)
    assert listed.paths == [] and page["total"] == 3


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_gits_exit_status_is_read_without_output_and_a_hung_command_is_killed(
    capfd, monkeypatch, pidfd
):
    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    assert git_files._exit_status(["sh", "-c", "echo out; echo err >&2; exit 3"], 5) == 3
    assert capfd.readouterr() == ("", "")
    assert git_files._exit_status(["no-such-command-relore"], 5) is None
    started = time.monotonic()
    assert git_files._exit_status(["sleep", "30"], 0.2) is None
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_gits_listing_is_read_whole_and_a_failed_or_hung_command_gives_none(
    capfd, monkeypatch, pidfd
):
    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    # more than a pipe holds, with errors on stderr (dropped)
    big = "import sys; sys.stdout.write('x' * 300000 + '\\0end'); sys.stderr.write('noise')"
    assert git_files._output_of([sys.executable, "-c", big], 10) == b"x" * 300000 + b"\0end"
    assert capfd.readouterr() == ("", "")
    assert git_files._output_of(["sh", "-c", "echo partial; exit 1"], 5) is None
    assert git_files._output_of(["no-such-command-relore"], 5) is None
    started = time.monotonic()
    assert git_files._output_of(["sh", "-c", "echo early; sleep 30"], 0.3) is None
    assert git_files._output_of(["sleep", "30"], 0.2) is None
    assert time.monotonic() - started < 5


def test_an_unchanged_tree_is_walked_again_without_reading_its_listings(tree, env, monkeypatch):
    first = index.repo_map(str(tree), env)
    listed = _Listings(monkeypatch, tree)
    monkeypatch.setattr(listing.Listings, "load", lambda self: pytest.fail("listings read"))
    again = index.repo_map(str(tree), env)
    assert listed.paths == [] and again["entries"] == first["entries"]
    assert again["files"]["source_files"] == 4


def test_a_walk_with_a_racy_listing_is_not_kept_whole(tree, env):
    assert _defined(tree, env, "beta") == ["pkg/sub/b.py"]
    walked = Path(listing.walked_path_for(env, str(tree)))
    assert walked.exists()
    (tree / "pkg" / "sub" / "d.py").write_text("def delta():\n    pass\n")  # sub/ is racy now
    assert _defined(tree, env, "delta") == ["pkg/sub/d.py"]
    assert not walked.exists()  # the next run lists sub/ again, as the listings say


def _kept_walk(env: dict, tree: Path, **fields) -> None:
    path = Path(listing.walked_path_for(env, str(tree)))
    path.write_bytes(marshal.dumps({**marshal.loads(path.read_bytes()), **fields}))


def _walk_spoiled(**fields):
    return lambda env, tree: _kept_walk(env, tree, **fields)


def _outside(path: str):
    """A kept walk naming ``path`` too, which defines ``top`` outside the tree."""

    def spoil(env, tree):
        (tree.parent / "outside.py").write_text("def top():\n    pass\n")
        kept = marshal.loads(Path(listing.walked_path_for(env, str(tree))).read_bytes())
        named = path.format(outside=tree.parent / "outside.py")
        _kept_walk(env, tree, paths=kept["paths"] + "\0" + named, codes=kept["codes"] + b"\0")

    return spoil


WALK_SPOILED = {
    "garbage": lambda env, tree: Path(listing.walked_path_for(env, str(tree))).write_bytes(b"x"),
    "another base": _walk_spoiled(base="pkg/"),
    "paths not a string": _walk_spoiled(paths=["top.py"]),
    "keys too few": _walk_spoiled(keys=[1, 2, 3]),
    "a key of another type": _walk_spoiled(keys=["0"] * 16),
    "codes past the languages": _walk_spoiled(codes=b"\x07" * 4),
    "a language unknown": _walk_spoiled(languages=["cobol"]),
    "an absolute path": _outside("{outside}"),
    "a path with '..'": _outside("../outside.py"),
    "a path with '.'": _outside("./../outside.py"),
    "an empty path": _walk_spoiled(paths="top.py\0\0pkg/a.py\0other/c.py"),
    "a directory outside": _walk_spoiled(dirs="\0../\0pkg/\0pkg/sub/"),
    "directories not ending in '/'": _walk_spoiled(dirs="\0other\0pkg\0pkg/sub"),
    "a link outside": _walk_spoiled(links=[("../x", True)]),
    "a link not a pair": _walk_spoiled(links=["pkg"]),
    "skipped not a string": _walk_spoiled(skipped=[None]),
    "skipped outside": _walk_spoiled(skipped="../x"),
}


@pytest.mark.parametrize("spoil", WALK_SPOILED.values(), ids=WALK_SPOILED.keys())
def test_a_kept_walk_spoiled_or_naming_paths_outside_the_tree_is_walked_again(tree, env, spoil):
    fresh = index.repo_map(str(tree), env)
    spoil(env, tree)
    again = index.repo_map(str(tree), env)
    assert again["entries"] == fresh["entries"]
    assert again["files"]["source_files"] == 4 and again["files"]["skipped_dirs"] == 0
    assert _defined(tree, env, "top") == ["top.py"]
