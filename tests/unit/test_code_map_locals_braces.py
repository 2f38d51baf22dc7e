"""``relore map`` ranks no parameter or local variable in JavaScript, TypeScript, Go or Rust
either (issue #37 item 8; Python's are ``test_code_map_locals.py``): ``params``, ``text``
and ``r`` in ``function handle(params){ const text = …; params.map(r => r) }`` were uses of
the functions another file spells so."""

from __future__ import annotations

import textwrap

import pytest
from fixtures.code_tree import assert_focus_leads, by_name, names, write_tree

from relore.lens import cache, engine, index, registry

PROVIDERS = {p.name: p for p in registry.PROVIDERS}

# per language: the file defining functions spelled like every handler's parameter and
# locals, a handler (written five times), and the names the map must hold
TREES = {
    "javascript": (
        "util.js",
        """
        export function params() {}
        export function text() {}
        export function r() {}
        export function used() {}
        """,
        "js",
        """
        import { used } from "./util.js";

        export function handle(params, { text } = {}, ...rest) {
          const rows = params.filter((r) => r);
          let total = 0;
          for (const r of rows) { total += r; }
          try { used(rows); } catch (text) { return text; }
          const pick = function (text) { return text; };
          return used({ text, total, rest, pick });
        }
        """,
        {"params", "text", "r", "used", "handle"},
    ),
    "typescript": (
        "util.ts",
        """
        export function params(): void {}
        export function text(): void {}
        export function r(): void {}
        export function used(x: unknown): void {}
        export interface T { id: number }
        """,
        "ts",
        """
        import { used } from "./util";

        export function handle<T>(params: T[], text?: string): T[] {
          const rows: T[] = params.filter((r: T) => r);
          const pick = <T,>(r: T): T => r;
          used(text);
          return rows.map(pick);
        }
        """,
        {"params", "text", "r", "used", "handle", "T"},
    ),
    "go": (
        "util.go",
        """
        package util

        func params() {}
        func text() {}
        func r() {}
        func Used(x ...any) int { return 0 }
        """,
        "go",
        """
        package h

        func Handle(params []int) (text int) {
            rows := params
            for _, r := range rows {
                text += r
            }
            var total = Used(rows)
            pick := func(r int) int { return r }
            return Used(text, total, pick)
        }
        """,
        {"params", "text", "r", "Used", "Handle"},
    ),
    "rust": (
        "util.rs",
        """
        pub fn params() {}
        pub fn text() {}
        pub fn r() {}
        pub fn used(_x: usize) -> usize { 0 }
        """,
        "rs",
        """
        use crate::util::used;

        pub fn handle(params: &[usize]) -> usize {
            let text = params.len();
            let rows: Vec<usize> = params.iter().map(|r| *r).collect();
            for r in &rows {
                used(*r);
            }
            match rows.first() {
                Some(r) => used(*r + text),
                None => used(text),
            }
        }
        """,
        {"params", "text", "r", "used", "handle"},
    ),
}


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


def _tree(tmp_path, language: str, handlers: int = 5):
    util_name, util, ext, handler, _names = TREES[language]
    files = {util_name: util, **{f"h{i}.{ext}": handler for i in range(handlers)}}
    return write_tree(tmp_path / "tree", files)


def _local(language: str, source: str) -> dict[str, list[bool]]:
    """Each name's occurrences, in order, as local (True) or not, as ``engine.extract``
    records them."""
    _err, _defs, occurrences, _exports = engine.extract(
        PROVIDERS[language], textwrap.dedent(source).encode()
    )
    return {
        name: [engine.local(code) for _b, _line, _c, code in rows]
        for name, rows in occurrences.items()
    }


@pytest.mark.parametrize("language", list(TREES))
def test_a_parameter_or_local_spelled_like_a_function_elsewhere_is_no_use(tmp_path, env, language):
    page = index.repo_map(str(_tree(tmp_path, language)), env)
    entries = by_name(page)
    used = "Used" if language == "go" else "used"
    assert names(page)[0] == used, names(page)
    for name in ("params", "text", "r"):
        assert (entries[name]["references"], entries[name]["referenced_from"]) == (0, 0), name
        assert entries[name]["score"] == 0, name
    # the map holds the tree's top-level definitions: no parameter, local or closure
    assert set(names(page)) == TREES[language][4]


@pytest.mark.parametrize("language", list(TREES))
def test_extract_names_marks_the_same_locals_as_the_whole_record(language):
    source = textwrap.dedent(TREES[language][3]).encode()
    provider = PROVIDERS[language]
    whole = engine.extract(provider, source)
    assert any(engine.local(o[3]) for rows in whole[2].values() for o in rows)
    for name in ("params", "text", "r", "rows", "used", "Used", "pick", "total", "T"):
        scoped = engine.extract_names(provider, source, [name])
        assert scoped[2].get(name, []) == whole[2].get(name, []), name


def test_map_focus_changes_the_list_of_a_js_tree_whose_files_have_parameters_spelled_like_functions(
    tmp_path, env
):
    # the failure: the parameters' spellings led the map from anywhere, so --focus moved
    # nothing; seen from a/, what a/ uses leads
    util, handler = TREES["javascript"][1], TREES["javascript"][3]
    files = {
        "util.js": util,
        "lib/alpha.js": "export class Alpha {}\n",
        "lib/beta.js": "export class Beta {}\n",
        "a/x.js": 'import { Alpha } from "../lib/alpha.js";\n'
        + textwrap.dedent(handler).replace("used", "Alpha"),
        **{
            f"b/y{i}.js": 'import { Beta } from "../lib/beta.js";\n' + textwrap.dedent(handler)
            for i in range(3)
        },
        **{f"b/z{i}.js": 'import { Beta } from "../lib/beta.js";\nnew Beta();\n' for i in range(3)},
    }
    assert_focus_leads(write_tree(tmp_path / "tree", files), env, "Beta", "Alpha")


def test_js_locals_follow_function_and_block_scopes_and_module_declarations_stay_the_map():
    source = """
        import { helper } from "./util.js";
        const text = 1;
        var v = text;
        async function top(a, [b, ...c], { d, e: f, g = text, ...h } = {}, i = text) {
          var v = a;
          { let text = 2; helper(text); }
          for (const k in c) { helper(k); }
          for (var m of c) { helper(m); }
          for (let n = 0; n < 1; n++) {}
          try {} catch ({ message }) { helper(message); }
          function inner(p) { return p; }
          const { lazy } = require("./lazy.js"), later = (await import("./later.js")).default;
          lazy(later);
          class Local {}
          return [v, text, inner, Local, b, d, f, g, h, i, (x) => x, async (y) => y];
        }
        class K {
          field = text;
          method(text) { return text; }
        }
        helper(text, v, top, K);
    """
    local = _local("javascript", source)
    # the module's `text` (declared, a default, a field's value, the call's) against a
    # block's `let text` and a method's parameter
    assert local["text"] == [False, False, False, False, True, True, False, False, True, True,
                             False]  # fmt: skip
    assert local["v"] == [False, True, True, False]  # the module's var; the function's var
    for name in ("a", "b", "c", "d", "f", "g", "h", "i", "k", "m", "n", "message", "p", "x",
                 "y"):  # fmt: skip
        assert all(local[name]), (name, local[name])
    # a function's own function and class: their definitions, then local uses
    assert local["inner"] == [False, True] and local["Local"] == [False, True]
    assert local["helper"] == [False] * 6  # imported: another module's
    assert local["lazy"] == [False, False] and local["later"] == [False, False]  # required
    assert local["top"] == [False, False] and local["K"] == [False, False]


def test_ts_parameters_and_type_parameters_are_local_and_declared_types_are_not():
    source = """
        import { Row } from "./row";
        export type Pick<T> = (r: T) => T;
        export interface Store<K> { get(key: K): Row; }
        export class Cache<V> implements Store<V> {
          constructor(private key: V) {}
          get<R>(key: V, make?: (k: V) => R): Row { const found: Row = make!(key) as Row; return found; }
        }
        export function load<T extends Row>(rows: T[], key = ""): T[] { return rows; }
    """
    local = _local("typescript", source)
    for name in ("T", "K", "V", "R", "r", "key", "make", "k", "found", "rows"):
        assert all(local[name]), (name, local[name])
    assert not any(local["Row"]) and not any(local["Store"]) and not any(local["Cache"])


def test_go_locals_begin_after_their_declaration_and_package_level_names_stay_the_map():
    source = """
        package p

        var level = 1

        const limit = 2

        type Box[T any] struct{ v T }

        func (b *Box[T]) Put(v T, n ...int) (err error) {
            level := level + 1
            var x, y = limit, v
            for i, r := range n {
                _ = i + r
            }
            for i = range n {
            }
            if w := x; w > 0 {
            }
            switch s := any(y).(type) {
            case int:
                _ = s
            }
            f := func(q int) int { return q }
            return f(level)
        }

        func Use() int { return level + limit }
    """
    local = _local("go", source)
    # the package's `level`, the right of `level := level + 1`, Use's; the short
    # declaration and its use
    assert local["level"] == [False, True, False, True, False]
    assert local["limit"] == [False, False, False]
    for name in ("b", "n", "err", "x", "y", "r", "w", "s", "f", "q", "T"):
        assert all(local[name]), (name, local[name])
    assert local["v"] == [False, True, True]  # the struct's field, then Put's parameter
    assert local["i"] == [True, True, False]  # `for i = range` assigns, declares nothing


def test_rust_patterns_bind_locals_and_items_stay_the_map():
    source = """
        use crate::util::{helper, LIMIT};

        pub const MAX: usize = 3;

        pub fn run<T: Clone>(items: &[T], (a, mut b): (usize, usize)) -> usize {
            helper(a);
            let helper = |x: usize| x + b;
            let Point { x, y: yy } = point();
            for (i, item) in items.iter().enumerate() {
                b += i + helper(yy) + x;
                let _ = item.clone();
            }
            if let Some(ref found) = items.first() {
                let _ = found;
            }
            fn inner(z: usize) -> usize { z }
            match b {
                MAX => MAX,
                LIMIT => LIMIT,
                n @ 0..=2 => n + inner(a),
                other => other,
            }
        }
    """
    local = _local("rust", source)
    # the import and the call before `let helper`; the closure bound after it
    assert local["helper"] == [False, False, True, True]
    for name in ("T", "items", "a", "b", "x", "yy", "i", "item", "found", "z", "n", "other"):
        assert all(local[name]), (name, local[name])
    assert local["inner"] == [False, True]  # the nested fn's own name is its definition
    assert not any(local["MAX"]) and not any(local["LIMIT"])
    assert not any(local["run"]) and not any(local["Point"])


def test_a_cache_written_before_other_languages_locals_were_told_apart_is_rebuilt(
    tmp_path, env, monkeypatch
):
    root = _tree(tmp_path, "javascript", handlers=3)
    javascript = PROVIDERS["javascript"]
    with monkeypatch.context() as old:  # the engine and cache format before
        old.setattr(cache, "FORMAT", 6)
        old.setattr(type(javascript), "local_places", lambda self, nodes: set())
        stale = by_name(index.repo_map(str(root), env))
        assert stale["params"]["references"] > 0
    page = index.repo_map(str(root), env)
    assert page["files"]["parsed"] == 4 and page["files"]["from_cache"] == 0
    assert by_name(page)["params"]["references"] == 0
