"""A source file anyone can commit must not stall the code lens: a syntax error tree-sitter
recovers as one ERROR node of tens of thousands of bare tokens costs its queries time growing
with the square of the run (64 kB of ``{``: 3.4 s a query; a 1 MB file: minutes)."""

from __future__ import annotations

import io
import json

import pytest

from relore.client import cli
from relore.lens import engine, registry

HOSTILE = {
    "open braces": b"{" * 65536,
    "open parentheses and stars": b"(*" * 32768,
    "a brace a line": b"{\n" * 32768,
}


@pytest.fixture(scope="module")
def python():
    provider = registry.by_name("python")
    try:
        provider.load()
    except Exception as exc:  # the grammar is a test dependency: never skip silently
        pytest.fail(f"the Python grammar must load for these tests: {exc}")
    return provider


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_run_of_bare_tokens_in_an_error_is_not_queried(python, name, monkeypatch):
    queried = []
    ts = python.load()[0]
    real = ts.QueryCursor

    def counting(*args, **kwargs):
        queried.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(ts, "QueryCursor", counting)
    record = engine.extract(python, HOSTILE[name])
    assert record[0] == engine.TANGLED
    assert record[1:3] == ([], {})
    assert queried == []


def test_an_ordinary_syntax_error_is_still_read_with_recovery(python):
    source = b"def broken(:\n    pass\n\n\ndef fine():\n    return broken()\n"
    has_error, definitions, occurrences, _exports = engine.extract(python, source)
    assert has_error is True
    assert "fine" in {d[0] for d in definitions}
    assert "broken" in occurrences


def test_bare_tokens_under_the_run_limit_are_read(python):
    source = b"x = 1\n" + b"{" * engine.TANGLE_RUN + b"\ny = x\n"
    has_error, _definitions, occurrences, _exports = engine.extract(python, source)
    assert has_error is True
    assert "x" in occurrences
    assert not engine.tangled(python.load()[1].parse(b"def f():\n    return 1\n").root_node)


def test_a_tangled_file_beside_real_code_is_named_and_the_rest_answered(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "real.py").write_text("def parse(text):\n    return text\n\n\nparse('x')\n")
    (tree / "hostile.py").write_bytes(b"parse = 1\n" + b"{" * 65536)
    env = {"RELORE_CODE_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["refs", "parse", str(tree), "--json"], env=env, stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    page = json.loads(out.getvalue())
    assert {row["path"] for row in page["references"]} == {str(tree / "real.py")}
    assert page["files"]["tangled_errors"] == 1
    assert page["files"]["syntax_errors"] == 0
    out = io.StringIO()
    cli.main(["refs", "parse", str(tree)], env=env, stdout=out, stderr=io.StringIO())
    assert "1 file not read: a syntax error holding hundreds of bare tokens" in out.getvalue()
