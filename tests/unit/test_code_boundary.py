"""The code lens keeps invariant 1: tree-sitter is loaded by map/defs/refs and nothing else.

The client's base install is the standard library; tree-sitter arrives with the ``[code]``
extra and is imported lazily by a provider. So ``relore status`` and ``relore search`` must
not load it, and no client module may import anything but the standard library and
``relore.client``/``relore.lens``/``relore.contract`` at the top level.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_DIRS = (ROOT / "client", ROOT / "lens")  # the agent's CLI and the code lens it runs
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "code" / "python" / "sample.py"


def _top_level_imports(path: Path) -> set[str]:
    """Imports that run when the module is imported (module body, not function bodies)."""
    names: set[str] = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.ClassDef | ast.If | ast.Try | ast.With):
            pending.extend(ast.iter_child_nodes(node))
    return names


def test_client_and_lens_modules_import_only_the_standard_library_and_relore_at_load():
    offenders = set()
    for path in sorted(p for where in CLIENT_DIRS for p in where.rglob("*.py")):
        for name in _top_level_imports(path):
            top = name.split(".")[0]
            if name.split(".")[:2] in (
                ["relore", "client"],
                ["relore", "contract"],
                ["relore", "lens"],
            ):
                continue
            if top == "__future__" or top in sys.stdlib_module_names:
                continue
            offenders.add(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders, offenders


def test_daemon_verbs_never_load_tree_sitter_and_code_verbs_do(tmp_path):
    script = textwrap.dedent(
        f"""
        import io, sys
        from relore.client.cli import main
        env = {{"RELORE_API": "http://127.0.0.1:9", "RELORE_CODE_CACHE": {str(tmp_path)!r}}}
        for argv in (["status"], ["search", "anything"]):
            code = main(argv, env=env, stdout=io.StringIO(), stderr=io.StringIO())
            assert code == 3, (argv, code)
        loaded = sorted(m for m in sys.modules if m.startswith("tree_sitter"))
        assert not loaded, loaded
        out = io.StringIO()
        code = main(["defs", "helper", "--path", {str(FIXTURE)!r}], env=env, stdout=out)
        assert code == 0, code
        assert "tree_sitter" in sys.modules and "tree_sitter_python" in sys.modules
        print("clean")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clean"


# Loaded by a cached answer, they would be most of its start: each a few milliseconds, beside
# a grep the answer has to beat (typing, pathlib and OpenSSL's hashlib; shutil, which argparse's
# own formatter imports; json for a text page;
# tree-sitter, the worker pool and the cache's writers when nothing is parsed or written).
# Counted from what relore's import adds: an editable install's hook loads pathlib and
# urllib.parse before it, so those two are caught from an installed wheel only.
NOT_FOR_A_CACHED_ANSWER = {
    "typing", "pathlib", "hashlib", "_hashlib", "subprocess", "json", "tree_sitter",
    "multiprocessing", "concurrent.futures", "tempfile", "secrets", "urllib.parse", "shutil",
}  # fmt: skip


@pytest.mark.parametrize("git", [False, True], ids=["walked", "under_git"])
def test_a_cached_answer_imports_no_module_it_does_not_need(tmp_path, git):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "m.py").write_text("def helper():\n    pass\n\n\nhelper()\n")
    if git:  # git ls-files lists it: spawned without subprocess
        subprocess.run(["git", "init", "-q", str(tree)], check=True)
    script = textwrap.dedent(
        f"""
        import io, sys
        before = set(sys.modules)
        from relore.client.cli import main
        env = {{"RELORE_CODE_CACHE": {str(tmp_path / "cache")!r}}}
        for verb in ("defs", "refs"):
            out = io.StringIO()
            assert main([verb, "helper", {str(tree)!r}], env=env, stdout=out) == 0
            assert "pkg/m.py" in out.getvalue(), out.getvalue()
        print(sorted((set(sys.modules) - before).intersection({sorted(NOT_FOR_A_CACHED_ANSWER)!r})))
        """
    )
    for _run in ("cold", "cached"):  # the second reads the cache the first wrote
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"a cached answer imported {result.stdout.strip()}"
