"""The code lens end to end over small trees made here: ranking, dedupe, caps, the cache,
the walk's exclusions, and the refusal to answer empty when no grammar is installed."""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from relore.client import cli
from relore.client.code import engine, index, registry


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(textwrap.dedent(body))
    return root


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in root.rglob("*")
        if p.is_file()
    }


def _run(argv: list[str], env: dict) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(argv, env=env, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


RANKED = {
    "shapes.py": """
        class A:
            def __init__(self):
                pass

            def info(self):
                return 1


        class B:
            def __init__(self):
                pass

            def info(self):
                return 2


        class C:
            def info(self):
                return 3


        def solo():
            return 0
    """,
    "use.py": """
        from shapes import A, B, C, solo

        a, b, c = A(), B(), C()
        a.info(); b.info(); c.info(); a.info(); b.info(); c.info(); a.info(); b.info(); c.info()
        solo(); solo(); solo(); solo()
    """,
}


def test_map_divides_a_shared_name_by_its_definitions_and_excludes_dunders(tmp_path, env):
    root = _write(tmp_path / "tree", RANKED)
    page = index.repo_map(str(root), env)
    by_name = {e["name"]: e for e in page["entries"]}
    # info: 3 definitions + 9 reads = 12 occurrences, shared by 3 definitions -> 4
    assert (by_name["info"]["occurrences"], by_name["info"]["definitions"]) == (12, 3)
    assert by_name["info"]["score"] == 4
    assert by_name["info"]["kinds"] == {"method": 3}
    # solo: 1 definition + 1 import + 4 calls -> 6, so it outranks the thrice-defined info
    assert by_name["solo"]["score"] == 6
    names = [e["name"] for e in page["entries"]]
    assert names.index("solo") < names.index("info")
    assert "__init__" not in names
    assert page["dunders_excluded"] == {"names": 1, "definitions": 2}
    assert page["total"] == page["returned"] == len(names) == 5  # A B C info solo


def test_map_is_capped_and_says_what_it_left_out(tmp_path, env):
    body = "".join(f"def f{i}():\n    return f{i}\n\n" for i in range(45))
    root = _write(tmp_path / "tree", {"many.py": body})
    page = index.repo_map(str(root), env)
    assert (page["returned"], page["total"], page["left_out"]) == (40, 45, 5)
    text = cli.render.map_page(page)
    assert "40 of 45 defined names" in text and "5 more not shown: pass --offset 40" in text
    rest = index.repo_map(str(root), env, offset=40)
    assert (rest["returned"], rest["left_out"]) == (5, 0)


def test_one_identifier_matched_by_several_patterns_is_one_row():
    # `g.greet()`: the identifier is a call, an attribute and a name to the query; one row.
    provider = registry.for_path("x.py")
    source = b"g.greet()\nh = g.greet\ngreet\n"
    _err, _defs, occurrences = engine.extract(provider, source)
    rows = occurrences["greet"]
    assert [(line, engine.KINDS[code]) for _b, line, _c, code in rows] == [
        (1, "call"),
        (2, "attribute"),
        (3, "name"),
    ]
    starts = [o[0] for names in occurrences.values() for o in names]
    assert len(starts) == len(set(starts))


def test_refs_caps_rows_and_counts_every_kind(tmp_path, env, capsys):
    body = "def target():\n    pass\n\n" + "target()\n" * 40 + "x = target\n" * 19
    root = _write(tmp_path / "tree", {"m.py": body})
    page = index.refs("target", str(root), env)
    assert page["counts"] == {"definition": 1, "call": 40, "attribute": 0, "name": 19}
    assert (page["returned"], page["total"], page["left_out"]) == (50, 60, 10)
    assert page["references"][0]["kind"] == "definition"
    code, out, _ = _run(["refs", "target", "--path", str(root)], env)
    assert code == cli.ExitStatus.OK
    assert "50 of 60" in out and "definition 1, call 40, attribute 0, name 19" in out
    assert "10 more not shown: pass --offset 50" in out
    code, _, _ = _run(["refs", "target", "--path", str(root), "--limit", "51"], env)
    assert code == cli.ExitStatus.USAGE and "at most 50" in capsys.readouterr().err
    names = index.refs("target", str(root), env, kind="name")
    assert (names["total"], names["counts"]["call"]) == (19, 40)


def test_every_verb_mirrors_its_page_in_json(tmp_path, env):
    root = _write(tmp_path / "tree", RANKED)
    for argv, fields in (
        (["map", str(root)], {"returned", "total", "entries", "dunders_excluded", "files"}),
        (["defs", "info", "--path", str(root)], {"returned", "total", "definitions", "kinds"}),
        (["refs", "info", "--path", str(root)], {"returned", "total", "references", "counts"}),
    ):
        code, out, err = _run([*argv, "--json"], env)
        assert code == cli.ExitStatus.OK, err
        page = json.loads(out)
        assert fields <= set(page)
        assert page["files"]["source_files"] == 2
    defs = json.loads(_run(["defs", "info", "--path", str(root), "--json"], env)[1])
    assert [d["qualified"] for d in defs["definitions"]] == ["A.info", "B.info", "C.info"]


def test_no_match_is_an_empty_page_at_exit_zero(tmp_path, env):
    root = _write(tmp_path / "tree", RANKED)
    code, out, _ = _run(["refs", "nowhere_at_all", "--path", str(root)], env)
    assert code == cli.ExitStatus.OK
    assert "0 of 0" in out and "no occurrence" in out
    code, _, err = _run(["defs", "x", "--path", str(root / "missing")], env)
    assert code == cli.ExitStatus.USAGE and "no such file" in err


def _without_grammars(monkeypatch, names: set[str] | None = None):
    broken = []
    for provider in registry.PROVIDERS:
        if names is None or provider.name in names:
            provider = copy.copy(provider)
            provider.grammar_module = "relore_test_no_such_grammar"
            provider._loaded = None
            provider._failure = None
        broken.append(provider)
    monkeypatch.setattr(registry, "PROVIDERS", tuple(broken))


def test_no_importable_grammar_is_an_error_naming_the_install_line(tmp_path, env, monkeypatch):
    root = _write(tmp_path / "tree", RANKED)
    _without_grammars(monkeypatch)
    with pytest.raises(registry.GrammarMissing, match=r"pip install 'relore\[code\]'"):
        registry.require_any()
    for argv in (["map", str(root)], ["defs", "info", "--path", str(root)]):
        code, out, err = _run(argv, env)
        assert code == cli.ExitStatus.ERROR
        assert out == "" and "pip install 'relore[code]'" in err


def test_a_tree_whose_only_language_has_no_grammar_is_an_error_not_empty(
    tmp_path, env, monkeypatch
):
    root = _write(tmp_path / "tree", RANKED)
    _without_grammars(monkeypatch, {"python"})
    code, out, err = _run(["map", str(root)], env)
    assert code == cli.ExitStatus.ERROR and out == ""
    assert "2 python files" in err and "pip install 'relore[code]'" in err
    # a mixed tree answers for what it can read and names what it could not
    _write(root, {"web.js": "function helper() {}\n"})
    page = index.repo_map(str(root), env)
    assert page["files"]["no_grammar"] == {"python": 2}
    assert "2 python not read: no grammar" in cli.render.map_page(page)


def test_a_repeat_call_on_an_unchanged_tree_parses_nothing(tmp_path, env):
    root = _write(tmp_path / "tree", RANKED)
    first = index.repo_map(str(root), env)
    assert (first["files"]["parsed"], first["files"]["from_cache"]) == (2, 0)
    before = engine.parses
    second = index.repo_map(str(root), env)
    assert engine.parses == before
    assert (second["files"]["parsed"], second["files"]["from_cache"]) == (0, 2)
    assert second["entries"] == first["entries"]
    refs = index.refs("info", str(root), env)
    assert engine.parses == before and refs["files"]["from_cache"] == 2
    # a changed file (size differs) is parsed again, and only that one
    (root / "use.py").write_text((root / "use.py").read_text() + "solo()\n")
    third = index.repo_map(str(root), env)
    assert (third["files"]["parsed"], third["files"]["from_cache"]) == (1, 1)
    assert {e["name"]: e["occurrences"] for e in third["entries"]}["solo"] == 7
    assert Path(first["files"]["cache"]).parent == Path(env["RELORE_CODE_CACHE"])


def test_refs_parses_only_files_that_contain_the_name(tmp_path, env):
    root = _write(tmp_path / "tree", {"a.py": "def needle(): pass\n", "b.py": "x = 1\n"})
    page = index.refs("needle", str(root), env)
    assert (page["files"]["parsed"], page["files"]["without_name"]) == (1, 1)
    assert page["files"]["source_files"] == 2


def test_the_lens_writes_nothing_into_the_tree(tmp_path, env):
    root = _write(tmp_path / "tree", {**RANKED, ".gitignore": "ignored/\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    status = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    before = _snapshot(root)  # after git status, which refreshes .git/index itself
    for argv in (["map", str(root)], ["defs", "info", "--path", str(root)]):
        assert _run(argv, env)[0] == cli.ExitStatus.OK
        assert _run(argv, env)[0] == cli.ExitStatus.OK
    assert _run(["refs", "solo", "--path", str(root)], env)[0] == cli.ExitStatus.OK
    assert _snapshot(root) == before
    after = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True
    ).stdout
    assert after == status
    assert list(Path(env["RELORE_CODE_CACHE"]).glob("*.marshal"))


def test_the_default_cache_is_under_xdg_or_home_never_the_tree(tmp_path):
    from relore.client.code import cache

    assert cache.directory({"XDG_CACHE_HOME": "/x"}) == Path("/x/relore/code")
    assert cache.directory({"HOME": "/h"}) == Path("/h/.cache/relore/code")
    assert cache.directory({"RELORE_CODE_CACHE": "/c", "XDG_CACHE_HOME": "/x"}) == Path("/c")


def test_the_walk_skips_vendored_ignored_huge_and_binary_files(tmp_path, env):
    root = _write(
        tmp_path / "tree",
        {
            "pkg/keep.py": "def kept(): pass\n",
            "node_modules/lib/x.js": "function vendored() {}\n",
            ".venv/lib/site.py": "def vendored(): pass\n",
            "pkg/__pycache__/keep.py": "def vendored(): pass\n",
            "ignored/gen.py": "def vendored(): pass\n",
            ".gitignore": "ignored/\n",
            "pkg/huge.py": "x = 1\n" * 200_000,
            "pkg/blob.py": b"def vendored(): pass\n\x00\x01",
            "README.md": "vendored\n",
        },
    )
    walked = index.repo_map(str(root), env)  # no git here: the fixed skip list
    assert walked["files"]["listing"] == "walk"
    assert walked["files"]["skipped_large"] == 1 and walked["files"]["skipped_binary"] == 1
    assert walked["files"]["other_files"] >= 2  # README.md, .gitignore
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    page = index.repo_map(str(root), env)  # under git: .gitignore decides too
    assert page["files"]["listing"] == "git"
    assert [e["name"] for e in page["entries"]] == ["kept"]
    assert page["files"]["skipped_large"] == 1 and page["files"]["skipped_binary"] == 1
    text = cli.render.map_page(page)
    assert "1 skipped as over 1,000,000 bytes" in text and "1 skipped as binary" in text


def test_build_output_is_skipped_beside_a_manifest_and_read_elsewhere(tmp_path, env):
    root = _write(
        tmp_path / "tree",
        {
            "proj/pyproject.toml": "",
            "proj/build/lib/copy.py": "def copied(): pass\n",
            "pkg/operations/build/real.py": "def real(): pass\n",
        },
    )
    names = [e["name"] for e in index.repo_map(str(root), env)["entries"]]
    assert names == ["real"]


def test_a_subdirectory_shares_the_roots_cache_and_prints_paths_as_given(tmp_path, env):
    root = _write(tmp_path / "tree", {"a/x.py": "def fa(): pass\n", "b/y.py": "def fb(): pass\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    whole = index.repo_map(str(root), env)
    part = index.repo_map(str(root / "a"), env)
    assert part["files"]["from_cache"] == 1 and part["files"]["parsed"] == 0
    assert [e["name"] for e in part["entries"]] == ["fa"]
    assert part["entries"][0]["locations"][0]["path"] == os.path.join(str(root / "a"), "x.py")
    assert whole["files"]["cache"] == part["files"]["cache"]


def test_a_path_named_inside_an_ignored_directory_is_read(tmp_path, env):
    root = _write(
        tmp_path / "tree",
        {".gitignore": ".venv/\n", ".venv/lib/site/mod.py": "def wanted(): pass\n"},
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert index.repo_map(str(root), env)["total"] == 0
    page = index.repo_map(str(root / ".venv" / "lib" / "site"), env)
    assert [e["name"] for e in page["entries"]] == ["wanted"]
    assert page["files"]["listing"] == "walk"
