"""The code lens reads its tree and nothing outside it (issue #35, item 3).

A tree the agent indexes is somebody else's: it may commit symbolic links (git mode 120000)
to a file outside it (``~/.pgpass``, ``/etc/passwd``) or to a directory outside (``root ->
/``). ``map``/``defs``/``refs`` never read through one, cold or from the cache, listed by
git or walked; a PATH (or ``--focus``) that leads through a link or out of the tree is
refused with one line and exit 2; over MCP, a path outside the server's working tree is a
tool error.
"""

from __future__ import annotations

import io
import json
import os
import subprocess

import pytest
from fixtures.code_tree import write_tree

from relore.client import cli, mcp_server
from relore.client.exits import ExitStatus, Refused

# what the files outside hold: a password line, a definition, a marked line
SECRET = "localhost:5432:*:relore_writer:CANARY-outside-password"
OUTSIDE_SOURCE = (
    "relore_writer = 'CANARY-outside-directory'\n\n\n"
    "def outside_only_secret():\n"
    "    return root  # CANARY-outside-directory\n"
)
LEAKS = ("CANARY", "root:x:0", "/bin/", "nologin")


def _hostile_tree(tmp_path, git: bool):
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "pgpass").write_text(SECRET + "\n")
    (outside / "lib" / "secret.py").write_text(OUTSIDE_SOURCE)
    tree = write_tree(
        tmp_path / "tree",
        {
            "src/app.py": (
                "relore_writer = connect()\n\n\ndef helper(root):\n    return relore_writer, root\n"
            ),
        },
    )
    os.symlink(outside / "pgpass", tree / "src" / "pgpass.py")  # a file outside
    os.symlink("/etc/passwd", tree / "src" / "passwd.py")  # `refs root` once printed it
    os.symlink("../../outside/lib", tree / "src" / "lib")  # a directory outside, relative
    os.symlink("/", tree / "root")  # the whole filesystem
    os.symlink("src/app.py", tree / "inside.py")  # a link inside the tree: not read either
    if git:
        run = {"cwd": tree, "check": True, "capture_output": True}
        subprocess.run(["git", "init", "-q"], **run)
        subprocess.run(["git", "add", "-A"], **run)
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "links"], **run
        )
        listed = subprocess.run(["git", "ls-files", "-s"], **run).stdout.decode()
        assert listed.count("120000") == 5, listed  # committed as symbolic links
    return tree


def _run(argv: list[str], env: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(argv, env=env, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


@pytest.mark.parametrize("git", [False, True], ids=["walked", "under_git"])
def test_map_defs_refs_never_print_what_a_committed_symlink_points_at(tmp_path, env, git):
    tree = _hostile_tree(tmp_path, git)
    calls = [
        ["refs", "relore_writer", str(tree / "src")],
        ["refs", "relore_writer", str(tree)],
        ["refs", "root", str(tree / "src")],
        ["refs", "root", str(tree)],
        ["defs", "outside_only_secret", str(tree)],
        ["defs", "helper", str(tree)],
        ["map", str(tree)],
        ["map", str(tree / "src")],
    ]
    for run in ("cold", "cached"):
        for argv in calls:
            for form in ([], ["--json"]):
                code, out, err = _run([*argv, *form], env)
                assert code == 0, (run, argv, err)
                leaked = [leak for leak in LEAKS if leak in out]
                assert not leaked, (run, argv, form, leaked, out[:2000])
        code, out, _ = _run(["defs", "outside_only_secret", str(tree), "--json"], env)
        assert json.loads(out)["total"] == 0, run
        code, out, _ = _run(["map", str(tree), "--json"], env)
        assert "outside_only_secret" not in out, run
        # the tree's own file still answers, once: never again through `inside.py`
        code, out, _ = _run(["refs", "relore_writer", str(tree), "--json"], env)
        page = json.loads(out)
        assert {row["path"].rsplit("/", 1)[-1] for row in page["references"]} == {"app.py"}
        assert page["total"] == 2, (run, page)


@pytest.mark.parametrize("git", [False, True], ids=["walked", "under_git"])
def test_a_path_through_a_symlink_is_refused_with_one_line_and_exit_2(tmp_path, env, git):
    tree = _hostile_tree(tmp_path, git)
    refused = [
        ["map", str(tree / "root" / "etc")],
        ["map", str(tree / "root")],
        ["defs", "outside_only_secret", str(tree / "src" / "lib")],
        ["refs", "relore_writer", str(tree / "src" / "lib" / "secret.py")],
        ["refs", "relore_writer", str(tree / "src" / "pgpass.py")],
        ["refs", "root", str(tree / "src" / "passwd.py")],
        ["defs", "helper", str(tree / "inside.py")],
        ["map", str(tree), "--focus", str(tree / "src" / "lib")],
    ]
    for argv in refused:
        code, out, err = _run(argv, env)
        assert code == ExitStatus.USAGE, (argv, code, out[:500])
        assert out == "" and err.count("\n") == 1, (argv, err)
        assert "symbolic link" in err and "CANARY" not in err, (argv, err)


def test_a_relative_path_through_a_symlink_is_refused_too(tmp_path, env, monkeypatch):
    tree = _hostile_tree(tmp_path, git=False)
    monkeypatch.chdir(tree)
    for argv in (["map", "root/etc"], ["defs", "x", "src/lib"], ["refs", "x", "src/lib/.."]):
        code, _out, err = _run(argv, env)
        assert code == ExitStatus.USAGE and "symbolic link" in err, (argv, err)


def test_mcp_map_defs_refs_refuse_a_path_outside_the_servers_working_tree(tmp_path, env):
    tree = _hostile_tree(tmp_path, git=True)
    tools = mcp_server.Tools(env, root=str(tree))
    outside = [
        ("map", {"path": "/etc"}),
        ("map", {"path": "../../.."}),
        ("map", {"path": str(tmp_path)}),
        ("defs", {"name": "root", "path": "/etc"}),
        ("defs", {"name": "root", "path": "../../.."}),
        ("refs", {"name": "root", "path": "/etc/passwd"}),
        ("refs", {"name": "root", "path": "src/../.."}),
        ("map", {"path": ".", "focus": ["/etc"]}),
    ]
    for verb, arguments in outside:
        with pytest.raises(Refused) as caught:
            tools.call(verb, arguments, "mcp-test")
        assert caught.value.status == ExitStatus.USAGE, (verb, arguments)
        assert "outside" in caught.value.line, (verb, arguments, caught.value.line)
    with pytest.raises(Refused) as caught:  # a link inside the tree out of it
        tools.call("map", {"path": "root/etc"}, "mcp-test")
    assert caught.value.status == ExitStatus.USAGE and "symbolic link" in caught.value.line
    # relative paths are the server's tree's; the tree itself answers
    page, text = tools.call("defs", {"name": "helper"}, "mcp-test")
    assert page["total"] == 1 and "CANARY" not in text
    page, text = tools.call("refs", {"name": "root", "path": "src"}, "mcp-test")
    assert page["total"] == 2 and not [leak for leak in LEAKS if leak in text]


def test_a_directory_git_lists_that_became_a_link_is_not_read_through(tmp_path, env):
    # git's index still lists sub/x.py after sub was replaced by a link: the scan's lstat
    # of sub/x.py goes through it, the read must not
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("relore_writer = 'CANARY-through-a-directory'\n")
    tree = write_tree(tmp_path / "tree", {"sub/x.py": "relore_writer = connect()\n"})
    run = {"cwd": tree, "check": True, "capture_output": True}
    subprocess.run(["git", "init", "-q"], **run)
    subprocess.run(["git", "add", "-A"], **run)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], **run
    )
    code, out, _ = _run(["refs", "relore_writer", str(tree)], env)
    assert code == 0 and "connect()" in out  # read, and cached
    (tree / "sub" / "x.py").unlink()
    (tree / "sub").rmdir()
    os.symlink(outside, tree / "sub")
    assert "sub/x.py" in subprocess.run(["git", "ls-files"], **run).stdout.decode()
    for form in ([], ["--json"], []):  # cold for the new file, then cached
        code, out, err = _run(["refs", "relore_writer", str(tree), *form], env)
        assert code == 0 and "CANARY" not in out, (form, out, err)
        code, out, err = _run(["map", str(tree), *form], env)
        assert code == 0 and "CANARY" not in out, (form, out, err)
