"""``relore map`` reads what a package declares public: its ``__init__``'s re-exports and its
public modules' ``__all__`` stand for the users the tree does not hold (#16).

The declarations are the tree's own text, so a hostile one must stay one file's worth: a
huge ``__all__``, names nothing defines, ``__all__`` in every file, star imports in a cycle.
"""

from __future__ import annotations

import textwrap

import pytest
from fixtures.code_tree import INTERNALS, write_tree
from fixtures.code_tree import by_name as _by_name
from fixtures.code_tree import names as _names

from relore.lens import engine, index, registry
from relore.lens.providers.base import MAX_EXPORTS

EVERY = 100_000  # a page holding every name


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


def _exports(source: str):
    return engine.extract(registry.by_name("python"), textwrap.dedent(source).encode())[3]


def test_python_records_carry_all_and_the_imports_a_module_re_exports():
    exports = _exports(
        """
        from . import sub
        from .a import B as C, D
        from ..pkg.mod import *
        from pkg.m import (E, F as F)
        import os
        __all__ = ["a", 'b'] + ("c",)
        __all__ += ["d"]
        __all__: list[str] = __all__ + ["e"]
        __all__.extend(["f", f"g{x}", "not a name"])
        __all__.append("h")
        __all__ = sorted(__all__)  # computed from itself: the names stay
        try:
            from ._main import main
        except ImportError:
            def main():
                from .inner import hidden
        """
    )
    names, imports = exports
    assert names == ["a", "b", "c", "d", "e", "f", "h"]
    assert imports == [
        (1, "", "sub", "sub"),
        (1, "a", "B", "C"),
        (1, "a", "D", "D"),
        (2, "pkg.mod", "*", "*"),
        (0, "pkg.m", "E", "E"),
        (0, "pkg.m", "F", "F"),
        (1, "_main", "main", "main"),
    ]
    assert _exports("x = 1\n") == (None, [])  # no __all__, nothing imported
    # computed from something else: nothing readable is listed, as if none were
    assert _exports("__all__ = ['a']\n__all__ = [n for n in dir()]\n") == (None, [])


def test_other_languages_declare_nothing():
    for name, source in (
        ("javascript", b"export * from './x';\nexport function f() {}\n"),
        ("go", b"package p\n\nfunc F() {}\n"),
    ):
        provider = registry.by_name(name)
        if provider.installed():
            assert engine.extract(provider, source)[3] is None


def test_names_a_package_re_exports_with_a_star_import_lead_its_map(tmp_path, env):
    # httpx's shape: `from ._api import *` names no identifier, so before this the helpers
    # every user calls scored 0, below a class one internal file uses
    files = {
        **INTERNALS,
        "pkg/__init__.py": """
            from ._api import *
            from .engine import Engine as Engine

            __all__ = ["get", "post", "Engine"]
        """,
        "pkg/_api.py": """
            __all__ = ["get", "post"]


            def get():
                pass


            def post():
                pass


            def _private():
                pass
        """,
    }
    page = index.repo_map(str(write_tree(tmp_path / "tree", files)), env)
    by_name = _by_name(page)
    assert by_name["get"]["score"] > 0 and by_name["post"]["score"] > 0
    assert _names(page).index("get") < _names(page).index("Buffer")
    assert _names(page).index("post") < _names(page).index("Buffer")
    assert by_name["_private"]["score"] == 0


def test_names_re_exported_as_themselves_outrank_what_one_internal_file_uses(tmp_path, env):
    # click's shape: `from .decorators import group as group` in __init__.py, no __all__,
    # and no other file of the package names `group`
    files = {
        **INTERNALS,
        "pkg/__init__.py": """
            from .engine import Engine as Engine
            from .decorators import group as group
            from .decorators import argument as argument
        """,
        "pkg/decorators.py": """
            def group():
                pass


            def argument():
                pass


            def internal_only():
                pass
        """,
    }
    page = index.repo_map(str(write_tree(tmp_path / "tree", files)), env)
    for name in ("group", "argument"):
        assert _names(page).index(name) < _names(page).index("Buffer"), _names(page)
    assert _by_name(page)["internal_only"]["score"] == 0


def test_a_public_modules_all_is_declared_by_its_package(tmp_path, env):
    # starlette's shape, had its modules an __all__: an empty __init__.py, users import
    # from `pkg.responses`; a private module's __all__ declares nothing on its own
    files = {
        **INTERNALS,
        "pkg/__init__.py": '__version__ = "1.0"\n',
        "pkg/responses.py": """
            __all__ = ["JSONResponse"]


            class JSONResponse:
                pass


            class Undeclared:
                pass
        """,
        "pkg/_hidden.py": '__all__ = ["Hidden"]\n\n\nclass Hidden:\n    pass\n',
    }
    page = index.repo_map(str(write_tree(tmp_path / "tree", files)), env)
    by_name = _by_name(page)
    assert by_name["JSONResponse"]["score"] > 0
    assert _names(page).index("JSONResponse") < _names(page).index("Buffer")
    assert by_name["Undeclared"]["score"] == by_name["Hidden"]["score"] == 0


def test_a_tree_without_a_package_init_ranks_as_before_whatever_its_all_says(tmp_path, env):
    plain = {rel.removeprefix("pkg/"): body for rel, body in INTERNALS.items()}
    plain["cli.py"] = "def main():\n    pass\n"
    declared = dict(plain)
    declared["cli.py"] = '__all__ = ["main", "Buffer"]\n\n\ndef main():\n    pass\n'
    before = index.repo_map(str(write_tree(tmp_path / "plain", plain)), env)
    after = index.repo_map(str(write_tree(tmp_path / "declared", declared)), env)
    assert [(e["name"], e["score"]) for e in after["entries"]] == [
        (e["name"], e["score"]) for e in before["entries"]
    ]


def test_a_huge_all_list_does_not_outrank_the_packages_own_references(tmp_path, env):
    # one file lists 3,000 functions of its own and 20,000 names nothing defines, and the
    # package re-exports all of it: each listed name is a sliver of one declaration
    listed = [f"f{i}" for i in range(3000)] + [f"ghost{i}" for i in range(20000)]
    junk = f"__all__ = {listed!r}\n\n" + "".join(f"def f{i}():\n    pass\n" for i in range(3000))
    files = {
        **INTERNALS,
        "pkg/__init__.py": "from .junk import *\nfrom .engine import Engine as Engine\n",
        "pkg/junk.py": junk,
    }
    root = write_tree(tmp_path / "tree", files)
    page = index.repo_map(str(root), env, limit=EVERY)
    by_name = _by_name(page)
    assert _names(page)[0] == "Engine"
    assert by_name["Buffer"]["score"] > max(by_name[f"f{i}"]["score"] for i in range(3000))
    record = next(r for rel, _l, r in index.scan(str(root), env).records if rel.endswith("junk.py"))
    assert len(record.exports[0]) == MAX_EXPORTS  # what a file may declare is capped


def test_all_in_every_file_lets_no_file_dominate(tmp_path, env):
    # every module declares its own names, one of them a single name: the order is still
    # what the package's references say
    files = {
        rel: f"__all__ = {['Engine', 'Buffer'] if rel.endswith('engine.py') else ['part']}\n"
        + textwrap.dedent(body)
        for rel, body in INTERNALS.items()
    }
    files["pkg/__init__.py"] = "from .engine import Engine as Engine\n"
    files["pkg/wire.py"] = files["pkg/wire.py"].replace("['part']", "['wire']")
    files["pkg/lone.py"] = '__all__ = ["Lone"]\n\n\nclass Lone:\n    pass\n'
    page = index.repo_map(str(write_tree(tmp_path / "tree", files)), env)
    names = _names(page)
    assert names[0] == "Engine"
    assert page["entries"][names.index("Lone")]["score"] < page["entries"][0]["score"] / 2


def test_star_imports_in_a_cycle_resolve_once_and_stay_bounded(tmp_path, env, monkeypatch):
    # 30 modules each star-importing every other, half of them with no __all__ (so the
    # import is followed) and half listing 300 names: each module's imports are resolved
    # once, a cycle ends where it started, and every definition re-exported is reached
    count = 30
    files = {"pkg/__init__.py": "".join(f"from .m{i} import *\n" for i in range(count))}
    for i in range(count):
        others = "".join(f"from .m{j} import *\n" for j in range(count) if j != i)
        names = [f"n{i}_{k}" for k in range(300)]
        listed = f"__all__ = {names!r}\n" if i % 2 else ""
        defs = "".join(f"def {n}():\n    pass\n" for n in names[:5])
        files[f"pkg/m{i}.py"] = others + listed + defs
    root = write_tree(tmp_path / "tree", files)
    python = registry.by_name("python")
    looked_up = []
    real = python.module_files
    monkeypatch.setattr(
        python, "module_files", lambda *a: looked_up.append(a) or real(*a), raising=False
    )
    page = index.repo_map(str(root), env, limit=EVERY)
    assert len(looked_up) == len(set(looked_up)) == count + count * (count - 1)
    assert page["total"] == count * 5
    assert all(e["score"] > 0 for e in page["entries"])  # every declared definition reached
    assert page["declared"] == {"names": count * 5, "files": 1 + count // 2}
