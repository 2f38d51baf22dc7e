"""The code lens end to end over small trees made here: ranking, dedupe, caps, the cache,
the walk's exclusions, and the refusal to answer empty when no grammar is installed."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from fixtures.code_tree import write_tree

from relore.client import cli
from relore.lens import confine, engine, index, pool, registry


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


def _names(page: dict) -> list[str]:
    return [e["name"] for e in page["entries"]]


def test_map_ranks_a_class_other_files_import_above_a_parameter_repeated_everywhere(tmp_path, env):
    # the failure: ranked by raw counts, `scope` and `path` (parameters and locals spelled
    # like App's methods) led the map and the class every handler imports did not
    handler = """
        from app import App

        def handle(scope, receive):
            path = scope["path"]
            if scope["type"] == "http":
                scope["x"] = path
            return App, scope, path
    """
    app = """
        class App:
            def scope(self):
                return {}

            def path(self):
                return "/"
    """
    root = write_tree(tmp_path / "tree", {"app.py": app, **{f"h{i}.py": handler for i in range(4)}})
    page = index.repo_map(str(root), env)
    by_name = {e["name"]: e for e in page["entries"]}
    assert _names(page)[0] == "App"
    assert (by_name["App"]["referenced_from"], by_name["App"]["references"]) == (4, 8)
    # a bare `scope` is a parameter, never App.scope (a method is reached through an object)
    assert by_name["scope"]["score"] == by_name["path"]["score"] == 0
    assert by_name["handle"]["score"] == 0  # each file's own: no other file uses it


def test_map_splits_a_shared_name_among_its_definitions_and_excludes_dunders(tmp_path, env):
    root = write_tree(tmp_path / "tree", RANKED)
    page = index.repo_map(str(root), env)
    by_name = {e["name"]: e for e in page["entries"]}
    assert by_name["info"]["kinds"] == {"method": 3}
    assert (by_name["info"]["definitions"], by_name["info"]["references"]) == (3, 9)
    # solo: an import and 4 calls by bare name; info: 9 reads through objects, which name
    # no receiver and weigh half
    assert (by_name["solo"]["references"], by_name["solo"]["referenced_from"]) == (5, 1)
    assert _names(page)[0] == "solo"
    assert "__init__" not in _names(page)
    assert page["dunders_excluded"] == {"names": 1, "definitions": 2}
    assert page["total"] == page["returned"] == 5  # A B C info solo
    assert page["entry_files"] == []  # no __init__.py: every walk starts at a reference


def test_map_leaves_out_a_name_defined_in_nearly_every_file_and_says_so(tmp_path, env):
    files = {f"m{i}.py": f"def run():\n    pass\n\ndef only_{i}():\n    run()\n" for i in range(8)}
    files["main.py"] = "from m0 import run, only_0\nrun()\nonly_0()\n"
    root = write_tree(tmp_path / "tree", files)
    page = index.repo_map(str(root), env)
    assert "run" not in _names(page)
    assert page["everywhere_excluded"] == {"names": 1, "definitions": 8, "more_files_than": 5}
    assert _names(page)[0] == "only_0"
    text = cli.render.map_page(page)
    assert "names defined in more than 5 files (8 definitions of 1 name)" in text


def test_map_focus_ranks_the_tree_as_seen_from_the_named_path(tmp_path, env, capsys):
    files = {
        "lib/alpha.py": "class Alpha:\n    pass\n",
        "lib/beta.py": "class Beta:\n    pass\n",
        "a/x.py": "from lib.alpha import Alpha\nAlpha()\n",
        **{f"b/y{i}.py": "from lib.beta import Beta\nBeta()\n" for i in range(3)},
    }
    root = write_tree(tmp_path / "tree", files)
    assert _names(index.repo_map(str(root), env))[:2] == ["Beta", "Alpha"]
    seen_from_a = index.repo_map(str(root), env, focus=[str(root / "a")])
    assert _names(seen_from_a)[0] == "Alpha" and seen_from_a["focus"] == [str(root / "a")]
    code, out, _ = _run(["map", str(root), "--focus", str(root / "a" / "x.py")], env)
    assert code == cli.ExitStatus.OK
    assert "seen from" in out and out.index("⟦Alpha⟧") < out.index("⟦Beta⟧")
    code, _, err = _run(["map", str(root / "lib"), "--focus", str(root / "a")], env)
    assert code == cli.ExitStatus.USAGE and "is not inside" in err


def test_map_takes_no_builtin_spelling_for_a_use_of_the_trees_definition(tmp_path, env):
    # `.append()` on a list and a bare `len()` mean the language's own, not Bag.append or
    # the tree's len
    coll = "class Bag:\n    def append(self, x):\n        pass\n\ndef len(x):\n    pass\n\n"
    coll += "def helper():\n    pass\n"
    user = "from coll import helper\nxs = []\n" + "xs.append(1)\nlen(xs)\n" * 20 + "helper()\n"
    root = write_tree(tmp_path / "tree", {"coll.py": coll, **{f"u{i}.py": user for i in range(3)}})
    page = index.repo_map(str(root), env)
    by_name = {e["name"]: e for e in page["entries"]}
    assert _names(page)[0] == "helper"
    assert by_name["append"]["score"] == by_name["len"]["score"] == 0


def test_map_gives_nothing_to_a_function_defined_inside_another(tmp_path, env):
    util = "def outer():\n    def callback():\n        pass\n    return callback\n\n"
    util += "def real():\n    pass\n"
    user = "from util import real\n\ndef go(callback=None):\n"
    user += "    callback()\n    callback()\n    real()\n"
    root = write_tree(tmp_path / "tree", {"util.py": util, **{f"m{i}.py": user for i in range(3)}})
    page = index.repo_map(str(root), env)
    by_name = {e["name"]: e for e in page["entries"]}
    assert _names(page)[0] == "real"
    assert "callback" not in by_name  # outer's own: no other file can name it, no entry


def test_map_counts_what_other_files_use_not_what_a_file_uses_of_itself(tmp_path, env):
    big = "def busy():\n    pass\n\n" + "busy()\n" * 30 + "\ndef shared():\n    pass\n"
    user = "from big import shared\nshared()\n"
    root = write_tree(tmp_path / "tree", {"big.py": big, "u1.py": user, "u2.py": user})
    page = index.repo_map(str(root), env)
    assert _names(page) == ["shared", "busy"]
    assert page["entries"][1]["score"] == 0


def test_map_starts_half_its_walks_at_the_package_entry_file(tmp_path, env):
    files = {
        "pkg/__init__.py": "from pkg.core import Public\n",
        "pkg/core.py": "class Public:\n    pass\n\nclass Internal:\n    pass\n",
        **{f"pkg/m{i}.py": "from pkg.core import Internal\nInternal()\n" for i in range(2)},
    }
    root = write_tree(tmp_path / "tree", files)
    page = index.repo_map(str(root), env)
    assert page["entry_files"] == [str(root / "pkg" / "__init__.py")]
    assert _names(page)[:2] == ["Public", "Internal"]
    assert "half the walk starts at" in cli.render.map_page(page)


def test_map_is_capped_and_says_what_it_left_out(tmp_path, env):
    body = "".join(f"def f{i}():\n    return f{i}\n\n" for i in range(45))
    root = write_tree(tmp_path / "tree", {"many.py": body})
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
    _err, _defs, occurrences, _exports = engine.extract(provider, source)
    rows = occurrences["greet"]
    assert [(line, engine.kind(code)) for _b, line, _c, code in rows] == [
        (1, "call"),
        (2, "attribute"),
        (3, "name"),
    ]
    starts = [o[0] for names in occurrences.values() for o in names]
    assert len(starts) == len(set(starts))


def test_refs_caps_rows_and_counts_every_kind(tmp_path, env, capsys):
    body = "def target():\n    pass\n\n" + "target()\n" * 40 + "x = target\n" * 19
    root = write_tree(tmp_path / "tree", {"m.py": body})
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
    root = write_tree(tmp_path / "tree", RANKED)
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
    root = write_tree(tmp_path / "tree", RANKED)
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
    root = write_tree(tmp_path / "tree", RANKED)
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
    root = write_tree(tmp_path / "tree", RANKED)
    _without_grammars(monkeypatch, {"python"})
    code, out, err = _run(["map", str(root)], env)
    assert code == cli.ExitStatus.ERROR and out == ""
    assert "2 python files" in err and "pip install 'relore[code]'" in err
    # a mixed tree answers for what it can read and names what it could not
    write_tree(root, {"web.js": "function helper() {}\n"})
    page = index.repo_map(str(root), env)
    assert page["files"]["no_grammar"] == {"python": 2}
    assert "2 python not read: no grammar" in cli.render.map_page(page)


def test_a_repeat_call_on_an_unchanged_tree_parses_nothing(tmp_path, env):
    root = write_tree(tmp_path / "tree", RANKED)
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
    assert {e["name"]: e["references"] for e in third["entries"]}["solo"] == 6
    assert Path(first["files"]["cache"]).parent == Path(env["RELORE_CODE_CACHE"])


def test_refs_parses_only_files_that_contain_the_name(tmp_path, env):
    root = write_tree(tmp_path / "tree", {"a.py": "def needle(): pass\n", "b.py": "x = 1\n"})
    page = index.refs("needle", str(root), env)
    assert (page["files"]["parsed"], page["files"]["without_name"]) == (1, 1)
    assert page["files"]["source_files"] == 2


def test_the_lens_writes_nothing_into_the_tree(tmp_path, env):
    root = write_tree(tmp_path / "tree", {**RANKED, ".gitignore": "ignored/\n"})
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
    assert list(Path(env["RELORE_CODE_CACHE"]).rglob("*.marshal"))


def test_the_default_cache_is_under_xdg_or_home_never_the_tree(tmp_path):
    from relore.lens import cache_files

    assert cache_files.directory({"XDG_CACHE_HOME": "/x"}) == "/x/relore/code"
    assert cache_files.directory({"HOME": "/h"}) == "/h/.cache/relore/code"
    assert cache_files.directory({"RELORE_CODE_CACHE": "/c", "XDG_CACHE_HOME": "/x"}) == "/c"
    # spelled as pathlib spelled it (the cache's place, and the page's files.cache)
    assert cache_files.directory({"RELORE_CODE_CACHE": "/c//d/./"}) == "/c/d"
    assert cache_files.directory({"XDG_CACHE_HOME": "/x/"}) == "/x/relore/code"
    # each root's directory named by its path's SHA-256, whichever module computes it
    digest = hashlib.sha256(b"/r").hexdigest()[:24]
    assert cache_files.root_directory({"RELORE_CODE_CACHE": "/c"}, "/r") == f"/c/{digest}"


def test_the_walk_skips_vendored_ignored_huge_and_binary_files(tmp_path, env):
    root = write_tree(
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
    root = write_tree(
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
    root = write_tree(
        tmp_path / "tree", {"a/x.py": "def fa(): pass\n", "b/y.py": "def fb(): pass\n"}
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    whole = index.repo_map(str(root), env)
    part = index.repo_map(str(root / "a"), env)
    assert part["files"]["from_cache"] == 1 and part["files"]["parsed"] == 0
    assert [e["name"] for e in part["entries"]] == ["fa"]
    assert part["entries"][0]["locations"][0]["path"] == os.path.join(str(root / "a"), "x.py")
    assert whole["files"]["cache"] == part["files"]["cache"]


def test_a_path_named_inside_an_ignored_directory_is_read(tmp_path, env):
    root = write_tree(
        tmp_path / "tree",
        {".gitignore": ".venv/\n", ".venv/lib/site/mod.py": "def wanted(): pass\n"},
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert index.repo_map(str(root), env)["total"] == 0
    page = index.repo_map(str(root / ".venv" / "lib" / "site"), env)
    assert [e["name"] for e in page["entries"]] == ["wanted"]
    assert page["files"]["listing"] == "walk"


def test_defs_and_refs_take_the_tree_as_a_positional_like_map(tmp_path, env):
    root = write_tree(tmp_path / "tree", RANKED)
    for verb in ("defs", "refs"):
        code, positional, err = _run([verb, "info", str(root), "--json"], env)
        assert code == cli.ExitStatus.OK, err
        code, option, _ = _run([verb, "info", "--path", str(root), "--json"], env)
        assert code == cli.ExitStatus.OK
        assert (
            json.loads(positional)["total"]
            == json.loads(option)["total"]
            == 3 + (verb == "refs") * 9
        )
        code, _, err = _run([verb, "info", str(root), "--path", str(tmp_path)], env)
        assert code == cli.ExitStatus.USAGE and "given twice" in err


def test_a_file_replaced_with_the_same_size_and_mtime_is_read_again(tmp_path, env):
    # stat-only revalidation: the inode tells a replaced file from the one cached
    root = write_tree(tmp_path / "tree", {"m.py": "def alpha():\n    pass\n"})
    assert index.defs("alpha", str(root), env)["total"] == 1
    old = (root / "m.py").stat()
    (tmp_path / "new.py").write_text("def omega():\n    pass\n")  # same length
    os.utime(tmp_path / "new.py", ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(tmp_path / "new.py", root / "m.py")
    new = (root / "m.py").stat()
    assert (new.st_size, new.st_mtime_ns) == (old.st_size, old.st_mtime_ns)
    assert new.st_ino != old.st_ino
    assert index.defs("omega", str(root), env)["total"] == 1
    assert index.defs("alpha", str(root), env)["total"] == 0


class _Opens:
    """Counts the source files the lens opens (``index`` reads a source and a row's line
    through ``confine.read_regular``, and anything else through its ``open``)."""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        monkeypatch.setattr(index, "open", self, raising=False)
        read_regular = confine.read_regular

        def counted(path, limit=None):
            self.paths.append(str(path))
            return read_regular(path, limit)

        monkeypatch.setattr(confine, "read_regular", counted)

    def __call__(self, path, *args, **kwargs):
        self.paths.append(str(path))
        return open(path, *args, **kwargs)


def test_a_repeat_refs_opens_no_file_that_cannot_hold_the_name(tmp_path, env, monkeypatch):
    files = {f"other{i}.py": f"def unrelated_{i}():\n    pass\n" for i in range(30)}
    root = write_tree(tmp_path / "tree", {**files, "has.py": "def needle():\n    pass\n"})
    first = index.refs("needle", str(root), env)
    assert (first["files"]["parsed"], first["files"]["without_name"]) == (1, 30)
    opens = _Opens(monkeypatch)
    again = index.refs("needle", str(root), env)
    assert (again["files"]["parsed"], again["files"]["from_cache"]) == (0, 1)
    assert again["files"]["without_name"] == 30
    assert [os.path.basename(p) for p in opens.paths] == ["has.py"]  # its line, for the row
    # after a map (every file parsed) any name is answered from the cache's name postings
    index.repo_map(str(root), env)
    opens.paths.clear()
    page = index.defs("unrelated_7", str(root), env)
    assert page["total"] == 1 and page["files"]["parsed"] == 0
    assert [os.path.basename(p) for p in opens.paths] == ["other7.py"]


def test_refs_parses_no_file_where_the_name_is_only_part_of_a_longer_word(tmp_path, env):
    root = write_tree(
        tmp_path / "tree",
        {"a.py": "parser = urlparse(x)\n# reparsed\n", "b.py": "parse(1)\n"},
    )
    page = index.refs("parse", str(root), env)
    assert (page["files"]["parsed"], page["files"]["without_name"]) == (1, 1)
    assert page["total"] == 1


def test_defs_parses_no_python_file_that_only_uses_the_name(tmp_path, env):
    files = {f"use{i}.py": "from lib import target\ntarget()\n" for i in range(5)}
    root = write_tree(tmp_path / "tree", {**files, "lib.py": "async def target():\n    pass\n"})
    page = index.defs("target", str(root), env)
    assert page["total"] == 1
    assert (page["files"]["parsed"], page["files"]["without_definition"]) == (1, 5)
    again = index.defs("target", str(root), env)
    assert (again["files"]["parsed"], again["files"]["without_definition"]) == (0, 5)
    refs = index.refs("target", str(root), env)  # a use is still a reference
    assert refs["total"] == 11 and refs["files"]["parsed"] == 5


def test_a_changed_file_is_answered_from_its_new_text_not_the_cached_names(tmp_path, env):
    root = write_tree(tmp_path / "tree", {"m.py": "def needle():\n    pass\n", "n.py": "x = 1\n"})
    assert index.refs("needle", str(root), env)["total"] == 1
    index.repo_map(str(root), env)
    (root / "m.py").write_text("def thread():\n    pass\n\n\nthread()\n")
    assert index.refs("needle", str(root), env)["total"] == 0
    (root / "n.py").write_text("needle = 2\n")
    page = index.refs("needle", str(root), env)
    assert page["total"] == 1 and page["references"][0]["path"].endswith("n.py")


def test_a_cache_whose_records_are_gone_is_read_again(tmp_path, env):
    root = write_tree(tmp_path / "tree", RANKED)
    first = index.repo_map(str(root), env)
    for segment in Path(first["files"]["cache"]).glob("seg-*.marshal"):
        segment.unlink()
    again = index.repo_map(str(root), env)
    assert again["files"]["parsed"] == 2 and again["entries"] == first["entries"]
    for names in Path(first["files"]["cache"]).glob("names-*.marshal"):
        names.unlink()
    page = index.refs("info", str(root), env)
    assert page["total"] == 12  # nothing known of the names: every file read again


def test_a_cold_scan_on_several_processes_gives_what_one_process_gives(tmp_path, env):
    body = (
        "from lib import shared\n\n\nclass K{i}:\n    def go(self):\n        return shared({i})\n"
    )
    files = {f"pkg/m{i:03d}.py": body.format(i=i) for i in range(pool.POOL_MIN_FILES + 6)}
    files["lib.py"] = "def shared(x):\n    return x\n"
    root = write_tree(tmp_path / "tree", files)
    before = engine.parses
    several = index.scan(str(root), env, workers=2, occurrences=True)
    assert several.files["workers"] == 2 and several.files["parsed"] == len(files)
    assert engine.parses == before  # every parse ran in a worker process
    alone = index.scan(str(root), {**env, "RELORE_CODE_CACHE": str(tmp_path / "c1")})
    assert alone.files["workers"] == 1
    assert [(rel, r.definitions, r.counts) for rel, _l, r in several.records] == [
        (rel, r.definitions, r.counts) for rel, _l, r in alone.records
    ]
    cached = index.scan(str(root), env, workers=2, occurrences=True)
    assert cached.files["from_cache"] == len(files) and cached.records == several.records
    # with a name: each file is sifted here, and those holding it are parsed by workers
    named = {**env, "RELORE_CODE_CACHE": str(tmp_path / "c2")}
    before = engine.parses
    page = index.refs("shared", str(root), named, workers=2, limit=200)
    assert (page["files"]["workers"], page["files"]["parsed"]) == (2, len(files))
    assert engine.parses == before
    alone = index.refs(
        "shared", str(root), {**env, "RELORE_CODE_CACHE": str(tmp_path / "c3")}, limit=200
    )
    assert alone["files"]["workers"] == 1 and alone["references"] == page["references"]


def test_records_of_deleted_files_are_compacted_away(tmp_path, env, monkeypatch):
    from relore.lens import cache

    monkeypatch.setattr(cache, "COMPACT_BYTES", 0)
    files = {f"m{i}.py": f"def f{i}():\n    pass\n\n\nf{i}()\n" * 20 for i in range(10)}
    root = write_tree(tmp_path / "tree", files)
    first = index.repo_map(str(root), env)
    where = Path(first["files"]["cache"])
    (segment,) = where.glob("seg-*.marshal")
    size = segment.stat().st_size
    for i in range(2, 10):
        (root / f"m{i}.py").unlink()
    page = index.repo_map(str(root), env)
    assert _names(page) == ["f0", "f1"] and page["files"]["from_cache"] == 2
    (compacted,) = where.glob("seg-*.marshal")
    assert compacted != segment and compacted.stat().st_size < size / 3
    assert index.repo_map(str(root), env)["entries"] == page["entries"]


def test_a_cached_refs_gives_each_name_its_own_rows_beside_names_sharing_its_letters(tmp_path, env):
    body = "parse = parser = reparse = parse_x = 1\nparse(parser)\nx.parse\n"
    root = write_tree(tmp_path / "tree", {"m.py": body})
    cold = {n: index.refs(n, str(root), env) for n in ("parse", "parser", "reparse", "parse_x")}
    assert [cold[n]["total"] for n in cold] == [3, 2, 1, 1]
    for name, page in cold.items():
        again = index.refs(name, str(root), env)
        assert again["files"]["from_cache"] == 1
        assert again["references"] == page["references"]


def test_a_cached_refs_shows_each_rows_scope_and_finds_it_again_when_the_record_is_lost(
    tmp_path, env
):
    body = "class K:\n    def go(self):\n        return needle()\n\n\ndef needle():\n    pass\n"
    root = write_tree(tmp_path / "tree", {"m.py": body})
    cold = index.refs("needle", str(root), env)
    again = index.refs("needle", str(root), env)
    assert again["files"]["from_cache"] == 1
    assert [r["scope"] for r in again["references"]] == ["", "K.go"]
    assert again["references"] == cold["references"]
    result = index.scan(str(root), env, name="needle", occurrences=True, definitions=False)
    assert [record.definitions for _rel, _l, record in result.records] == [None]
    for segment in Path(cold["files"]["cache"]).glob("seg-*.marshal"):
        segment.unlink()
    assert [d[2] for d in result.definitions("m.py", "python")] == ["K", "K.go", "needle"]
