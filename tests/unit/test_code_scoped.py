"""A cold ``refs``/``defs`` parses each file that can hold the name, then classifies that
name's places alone (``engine.extract_names``), not every identifier of the file; the cache
keeps such a record as scoped to its names. Its rows must be exactly the whole record's,
and a later ``map``, another name or the same name must answer as from a whole record."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fixtures.code_tree import write_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relore.lens import cache, confine, engine, index, pool, registry, sourcefile, tree_scan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "code"
PROVIDERS = {p.name: p for p in registry.PROVIDERS}


@pytest.fixture
def env(tmp_path):
    return {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}


@pytest.fixture
def sparse(monkeypatch):
    """Every file scoped however dense the name is in it (these trees are tiny)."""
    monkeypatch.setattr(sourcefile, "DENSE_BYTES", 0)


def _source(language: str, stem: str = "sample") -> bytes:
    return (FIXTURES / language / f"{stem}{PROVIDERS[language].extensions[0]}").read_bytes()


def _same_rows(provider, source: bytes, extra: tuple[str, ...] = ()) -> None:
    """Each name's rows, definitions and rows' scopes as the whole record gives them."""
    whole = engine.extract(provider, source)
    names = [n for n in (*sorted(whole[2]), *extra) if engine.scopable(n)]
    scoped = engine.extract_names(provider, source, names)
    assert scoped[0] == whole[0] and scoped[3] is None  # (exports: the map's, never read)
    assert set(scoped[1]) <= set(whole[1])
    for name in names:
        rows = whole[2].get(name, [])
        assert scoped[2].get(name, []) == rows, name
        assert [d for d in scoped[1] if d[0] == name] == [d for d in whole[1] if d[0] == name]
        for row in rows:
            assert index._enclosing(scoped[1], row[0]) == index._enclosing(whole[1], row[0])
    assert set(scoped[2]) <= set(names)


@pytest.mark.parametrize("stem", ["sample", "broken"])
@pytest.mark.parametrize("language", sorted(PROVIDERS))
def test_a_scoped_record_gives_each_name_the_rows_definitions_and_scopes_the_whole_one_gives(
    language, stem
):
    _same_rows(PROVIDERS[language], _source(language, stem), ("absent", "greet", "hel"))


# what a syntax error leaves: unclosed brackets, stray keywords, a name glued to a number or
# to a non-ASCII letter, invalid UTF-8, zero-width nodes tree-sitter inserts to recover
TOKENS = [
    "(", ")", "[", "{", "}", ":", ".", ",", "=", "@", "::", "=>", "#", "r#", '"', "'", "\n",
    "    ", "def ", "class ", "fn ", "function ", "impl ", "async ", "lambda", "3", "\\\n",
    "helper", ".helper", " helper(", "3helper", "éhelper", "greet",
]  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    language=st.sampled_from(sorted(PROVIDERS)),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.sampled_from([*TOKENS, "\xff", None])), max_size=8
    ),
)
def test_a_scoped_record_of_a_broken_file_still_gives_the_whole_records_rows(language, edits):
    source = _source(language)
    for where, token in edits:
        at = int(where * len(source))
        if token is None:
            source = source[:at] + source[at + 3 :]
        else:
            raw = b"\xff" if token == "\xff" else token.encode()
            source = source[:at] + raw + source[at:]
    _same_rows(PROVIDERS[language], source, ("helper", "greet"))


class _Counted:
    def __init__(self, monkeypatch, name: str):
        self.calls = 0
        real = getattr(engine, name)

        def counted(*args):
            self.calls += 1
            return real(*args)

        monkeypatch.setattr(engine, name, counted)


TREE = {
    "lib.py": "def shared(x):\n    return helper(x)\n\n\ndef helper(y):\n    return y\n",
    "use.py": "from lib import shared\n\n\nclass K:\n    def go(self):\n        return shared(1)\n",
    "other.py": "def helper():\n    pass\n\n\nhelper()\n",
    "none.py": "x = 1\n",
}


def test_a_cold_refs_or_defs_captures_no_identifier_but_the_names(
    tmp_path, env, monkeypatch, sparse
):
    # the whole record captures every identifier of a file (most of a cold refs' time)
    root = write_tree(tmp_path / "tree", TREE)
    whole, scoped = _Counted(monkeypatch, "extract"), _Counted(monkeypatch, "extract_names")
    assert index.refs("shared", str(root), env)["total"] == 3
    assert index.defs("helper", str(root), env)["total"] == 2
    assert (whole.calls, scoped.calls) == (0, 4)
    index.repo_map(str(root), env)  # the map's counts need every identifier
    assert whole.calls == 4


def _answer(page: dict) -> dict:
    """A page without its accounting of the work done (what was parsed, read, cached)."""
    return {k: v for k, v in page.items() if k != "files"}


def _verbs(root: Path, env: dict) -> dict:
    return {
        "refs shared": index.refs("shared", str(root), env),
        "refs helper": index.refs("helper", str(root), env),
        "refs helper call": index.refs("helper", str(root), env, kind="call"),
        "defs shared": index.defs("shared", str(root), env),
        "defs helper": index.defs("helper", str(root), env),
        "defs go": index.defs("go", str(root), env),
        "refs K": index.refs("K", str(root), env),
        "map": index.repo_map(str(root), env),
    }


def test_a_record_scoped_to_one_name_is_never_read_for_another_name_or_the_map(
    tmp_path, env, sparse
):
    root = write_tree(tmp_path / "tree", TREE)
    fresh = {}
    for verb, page in _verbs(root, env).items():  # each on an empty cache: a whole answer
        alone = {**env, "RELORE_CODE_CACHE": str(tmp_path / f"alone-{len(fresh)}")}
        fresh[verb] = _answer(_verbs(root, alone)[verb])
        assert _answer(page) == fresh[verb], verb
    # and again, every record now scoped or whole, from the cache
    again = _verbs(root, env)
    for verb, page in again.items():
        assert _answer(page) == fresh[verb], verb
        assert page["files"]["parsed"] == 0, verb


def test_a_scoped_record_answers_its_names_from_the_cache_and_reads_the_file_for_another(
    tmp_path, env, sparse
):
    root = write_tree(tmp_path / "tree", TREE)
    index.refs("shared", str(root), env)
    (entry,) = [e for rel, e in _store(env, root).items() if rel == "use.py"]
    assert entry[cache.COVERS] == ("shared",)
    # another name: read again (the sift finds `helper` in lib.py and other.py alone)
    page = index.refs("helper", str(root), env)
    assert page["files"]["parsed"] == 2 and page["total"] == 4
    assert _store(env, root)["lib.py"][cache.COVERS] == ("helper", "shared")
    # both names now answered from the cache; use.py was found without `helper`
    for name in ("shared", "helper"):
        assert index.refs(name, str(root), env)["files"]["parsed"] == 0
    assert index.refs("helper", str(root), env)["files"]["without_name"] == 2
    # a map reads every scoped file again for its counts, and leaves whole records
    assert index.repo_map(str(root), env)["files"]["parsed"] == 4
    assert all(len(e) == cache.COVERS for e in _store(env, root).values() if len(e) > 6)


def test_a_file_asked_for_more_than_scoped_names_names_keeps_a_whole_record(
    tmp_path, env, monkeypatch, sparse
):
    monkeypatch.setattr(tree_scan, "SCOPED_NAMES", 2)
    root = write_tree(tmp_path / "tree", {"m.py": "a = b = c = 1\nprint(a, b, c)\n"})
    for name in ("a", "b"):
        index.refs(name, str(root), env)
    assert _store(env, root)["m.py"][cache.COVERS] == ("b", "a")
    assert index.refs("c", str(root), env)["total"] == 2
    assert len(_store(env, root)["m.py"]) == cache.COVERS  # whole: no names listed
    assert index.repo_map(str(root), env)["files"]["parsed"] == 0


def _store(env: dict, root: Path) -> dict:
    store = cache.Store(env, os.path.realpath(root))
    return store.load()


def test_a_named_cold_scan_on_workers_reads_no_file_before_they_start(tmp_path, env, monkeypatch):
    # the sift ran over every file here first, and only then did the workers parse
    files = {f"pkg/m{i:03d}.py": f"def f{i}():\n    return needle({i})\n" for i in range(80)}
    root = write_tree(tmp_path / "tree", {**files, "lib.py": "def needle(x):\n    return x\n"})
    reads = []
    real = confine.read_regular
    monkeypatch.setattr(
        confine, "read_regular", lambda full, limit=None: reads.append(full) or real(full, limit)
    )
    result = index.scan(str(root), env, name="needle", occurrences=True, workers=2)
    assert result.files["workers"] == 2 and result.files["parsed"] == 81
    assert reads == []  # every file was read by a worker (a forked copy of this counter)
    one = index.scan(
        str(root), {**env, "RELORE_CODE_CACHE": str(tmp_path / "c1")}, "needle", occurrences=True
    )
    assert [(rel, r.occurrences) for rel, _l, r in one.records] == [
        (rel, r.occurrences) for rel, _l, r in result.records
    ]


def _old_word(name: str):
    return re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")


BYTES = st.lists(
    st.sampled_from([b"ab", b"a", b"_", b"9", b" ", b"\n", b"\\", b"def", b"class", b"\xc3\xa9"]),
    max_size=14,
).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(data=BYTES, name=st.sampled_from(["ab", "a", "aa", "a_9", "\xe9", "a\xe9"]))
def test_the_byte_sift_finds_what_the_lookbehind_pattern_it_replaced_found(data, name):
    # a sift that missed a file would drop its rows; one that passed more would only cost
    old = _old_word(name) if name.isascii() else None
    held = name.encode() in data and (old is None or bool(old.search(data)))
    assert sourcefile._holds(data, name) == held


def test_a_worker_that_dies_leaves_its_files_to_this_process(tmp_path, env, monkeypatch):
    files = {f"m{i:03d}.py": f"def f{i}():\n    return needle({i})\n" for i in range(90)}
    root = write_tree(tmp_path / "tree", files)
    here, real, read_here = os.getpid(), pool._read_source, []

    def dies_in_a_worker(job, beneath):
        if os.getpid() != here and job[0].endswith("m042.py"):
            os._exit(3)  # killed, out of memory: its chunk is never answered
        if os.getpid() == here:
            read_here.append(os.path.basename(job[0]))
        return real(job, beneath)

    monkeypatch.setattr(pool, "_read_source", dies_in_a_worker)
    page = index.refs("needle", str(root), env, workers=2, limit=200)
    assert "m042.py" in read_here  # finished here
    alone = {**env, "RELORE_CODE_CACHE": str(tmp_path / "alone")}
    assert _answer(page) == _answer(index.refs("needle", str(root), alone, limit=200))
    assert page["total"] == 90 and page["files"]["parsed"] == 90


def test_a_stopped_scan_on_workers_leaves_no_worker_behind(tmp_path, env, monkeypatch):
    files = {f"m{i:03d}.py": f"def f{i}():\n    return needle({i})\n" for i in range(90)}
    root = write_tree(tmp_path / "tree", files)
    asked, forked, fork = [], [], os.fork

    def forks() -> int:  # the scan's workers (the session has children of its own)
        pid = fork()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", forks)

    def stop() -> bool:  # once per file statted, then once per file read: stop midway
        asked.append(1)
        return len(asked) > 90 + 10

    with pytest.raises(index.Stopped, match="stopped after 10 of 90 files"):
        index.scan(str(root), env, name="needle", occurrences=True, workers=2, stop=stop)
    assert len(forked) == 2
    for pid in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # every worker reaped


def test_a_file_dense_with_the_name_gets_a_whole_record_the_cheaper_one(tmp_path, env):
    # each place costs a scoped record two small queries: past DENSE_BYTES a place, a
    # whole record costs less, and serves every later name and the map too
    root = write_tree(
        tmp_path / "tree", {"d.py": "x = x + x\n" * 50, "s.py": "x = 1\n" + "#\n" * 60}
    )
    assert index.refs("x", str(root), env)["total"] == 151
    store = _store(env, root)
    assert len(store["d.py"]) == cache.COVERS and store["s.py"][cache.COVERS] == ("x",)
