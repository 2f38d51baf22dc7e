"""``relore map/defs/refs`` leave without the interpreter's teardown once the page is
printed: what they printed must still all arrive, and their exit status be the verb's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fixtures.code_tree import write_tree

RELORE = str(Path(sys.executable).with_name("relore"))


def _run(argv: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = {"RELORE_CODE_CACHE": str(cache), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [RELORE, *argv], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_a_lens_verbs_page_arrives_whole_and_its_status_is_the_verbs(tmp_path):
    # pages larger than a pipe's buffer, as JSON and as text
    files = {f"m{i}.py": f"def f{i}():\n    return f{i}()\n\n\nf{i}()\n" for i in range(300)}
    tree = write_tree(tmp_path / "tree", files)
    for run in ("cold", "cached"):
        page = _run(["map", str(tree), "--json", "--limit", "40"], tmp_path / "cache")
        assert page.returncode == 0, (run, page.stderr)
        assert len(json.loads(page.stdout)["entries"]) == 40
        text = _run(["refs", "f7", str(tree)], tmp_path / "cache")
        assert text.returncode == 0 and text.stdout.count("m7.py") == 3, (run, text)
        assert text.stdout.endswith("\n")
    refused = _run(["defs", "f1", str(tmp_path / "nowhere")], tmp_path / "cache")
    assert refused.returncode == 2 and "no such file or directory" in refused.stderr
    nothing = _run(["defs", "absent_name", str(tree), "--json"], tmp_path / "cache")
    assert nothing.returncode == 0 and json.loads(nothing.stdout)["total"] == 0
