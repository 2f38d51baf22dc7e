"""``relore map`` ranks what a tree defines and uses across its files, never a parameter or a
local variable: a parameter ``params`` or a comprehension's ``r`` is no use of a function
``params`` or ``r`` another file defines (issue #37 item 8: ``params``, ``text``, ``r`` led
the map, "used in 59 files")."""

from __future__ import annotations

import textwrap

import pytest
from fixtures.code_tree import assert_focus_leads, by_name, names, write_tree

from relore.lens import cache, engine, index, registry

PYTHON = {p.name: p for p in registry.PROVIDERS}["python"]

# a module defining functions spelled like the parameters and locals of every handler
UTIL = """
    def params():
        pass


    def text():
        pass


    def r():
        pass


    def used():
        pass
"""
HANDLER = """
    from util import used


    def handle(params, *, text=None):
        rows = [r for r in params if r]
        total = sum(r * 2 for r in rows)
        pick = lambda text: text
        with open(params) as text:
            pass
        return used(text=rows), total, pick
"""


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


def _rows(source: str) -> dict[str, list[tuple[int, str, bool]]]:
    """Each name's (line, kind, local) rows as ``engine.extract`` gives them."""
    _err, _defs, occurrences, _exports = engine.extract(PYTHON, source.encode())
    return {
        name: [(line, engine.kind(code), engine.local(code)) for _b, line, _c, code in rows]
        for name, rows in occurrences.items()
    }


def test_a_parameter_or_comprehension_variable_spelled_like_a_function_elsewhere_is_no_use(
    tmp_path, env
):
    root = write_tree(
        tmp_path / "tree", {"util.py": UTIL, **{f"h{i}.py": HANDLER for i in range(5)}}
    )
    page = index.repo_map(str(root), env)
    entries = by_name(page)
    assert names(page)[0] == "used"
    for name in ("params", "text", "r"):
        assert (entries[name]["references"], entries[name]["referenced_from"]) == (0, 0), name
        assert entries[name]["score"] == 0, name
    # the map's entries are the tree's definitions: no parameter, local or lambda of `handle`
    assert set(names(page)) == {"params", "text", "r", "used", "handle"}


def test_a_function_defined_inside_another_is_no_entry_of_the_map(tmp_path, env):
    util = "def outer():\n    def callback():\n        pass\n    class Local:\n"
    util += "        def method(self):\n            pass\n    return callback, Local\n"
    root = write_tree(tmp_path / "tree", {"util.py": util, "use.py": "from util import outer\n"})
    assert names(index.repo_map(str(root), env)) == ["outer"]


def test_map_focus_changes_the_list_when_every_file_has_parameters_spelled_like_functions(
    tmp_path, env
):
    # the failure: the parameters' spellings led the map from anywhere, so --focus moved
    # nothing; seen from a/, what a/ uses leads
    files = {
        "util.py": UTIL,
        "lib/alpha.py": "class Alpha:\n    pass\n",
        "lib/beta.py": "class Beta:\n    pass\n",
        "a/x.py": "from lib.alpha import Alpha\n" + HANDLER.replace("used", "Alpha"),
        **{f"b/y{i}.py": "from lib.beta import Beta\n" + HANDLER for i in range(3)},
        **{f"b/z{i}.py": "from lib.beta import Beta\nBeta()\n" for i in range(3)},
    }
    assert_focus_leads(write_tree(tmp_path / "tree", files), env, "Beta", "Alpha")


def test_a_global_rebinding_in_a_function_is_a_use_of_the_module_level_name():
    source = """
        import os

        counter = 0


        def bump(step):
            global counter
            counter = counter + step
            return os.sep


        def outer():
            state = 0

            def inner():
                nonlocal state
                state += 1
                return state

            return inner, state
    """
    rows = _rows(textwrap.dedent(source))
    assert [local for _line, _kind, local in rows["counter"]] == [False] * 4
    assert [local for _line, _kind, local in rows["state"]] == [True] * 5
    assert [local for _line, _kind, local in rows["step"]] == [True, True]
    counts = engine.counts(engine.extract(PYTHON, textwrap.dedent(source).encode())[2])
    assert counts["counter"] == (4, 0) and "state" not in counts and "step" not in counts


def test_a_global_rebinding_raises_the_other_files_definition_a_local_does_not(tmp_path, env):
    state = "def counter():\n    pass\n\n\ndef total():\n    pass\n"
    user = "from state import counter, total\n\n\ndef bump():\n    global counter\n"
    user += (
        "    counter = counter + 1\n\n\ndef add(total):\n    return [total for total in total]\n"
    )
    root = write_tree(tmp_path / "tree", {"state.py": state, "u.py": user})
    entries = by_name(index.repo_map(str(root), env))
    assert entries["counter"]["references"] == 4  # the import, the global, both in bump
    assert entries["total"]["references"] == 1  # the import alone: add's are its own


def test_locals_follow_pythons_scopes_not_the_spelling():
    source = """
        from util import helper, text


        def f(a, b=text, *rest: text, key=lambda text: text, **kw) -> text:
            from lazy import loaded
            x, (y, *z) = a
            for i, j in rest:
                pass
            (w := 1)
            try:
                pass
            except ValueError as err:
                pass
            match a:
                case {"k": cap, **others}:
                    pass
            helper(text=x)
            return [text for text in loaded(text) if text], [x for _ in text]


        class C:
            text = 1

            def method(self):
                return text
    """
    rows = _rows(textwrap.dedent(source))
    local = {name: [is_local for *_at, is_local in found] for name, found in rows.items()}
    # the import, the default, the annotations, the comprehension's first iterable, the
    # class body's binding and the method's use (a class body is not seen from a method)
    # are the module's; the keyword, the lambda's and the comprehension's own are local
    assert local["text"] == [False, False, False, True, True, False, True, True, True, False,
                             True, False, False, False]  # fmt: skip
    for name in ("a", "b", "rest", "key", "kw", "x", "y", "z", "i", "j", "w", "err", "cap",
                 "others", "self"):  # fmt: skip
        assert all(local[name]), name
    assert local["loaded"] == [False, False]  # imported inside the function: another module's
    assert local["helper"] == [False, False]


def test_extract_names_marks_the_same_locals_as_the_whole_record():
    source = textwrap.dedent(HANDLER + "\nparams = 1\n\n\ndef g():\n    global params\n").encode()
    whole = engine.extract(PYTHON, source)
    for name in ("params", "text", "r", "rows", "used", "pick"):
        scoped = engine.extract_names(PYTHON, source, [name])
        assert scoped[2].get(name, []) == whole[2].get(name, []), name


def test_a_cache_written_before_locals_were_told_apart_is_rebuilt(tmp_path, env, monkeypatch):
    root = write_tree(
        tmp_path / "tree", {"util.py": UTIL, **{f"h{i}.py": HANDLER for i in range(3)}}
    )
    with monkeypatch.context() as old:  # the engine and cache format before locals
        old.setattr(cache, "FORMAT", 5)
        old.setattr(type(PYTHON), "local_places", lambda self, nodes: set())
        stale = by_name(index.repo_map(str(root), env))
        assert stale["params"]["references"] > 0
    page = index.repo_map(str(root), env)
    assert page["files"]["parsed"] == 4 and page["files"]["from_cache"] == 0
    assert by_name(page)["params"]["references"] == 0
