"""The layer rule: each package imports only the layers below it.

    contract   stdlib only: version, wire, patterns, places, stamps, sanitiser, envelope,
               the page renderer, rules
    lens       contract                      (the code lens over a tree: map/defs/refs; it may
                                              import tree-sitter, lazily)
    client     contract, lens                (the agent's `relore` and `relore mcp` only)
    extract    contract                      (the writer: GitHub into raw/ops)
    serve      contract, lens                (the reader: the renderer and the lens are
                                              libraries it shares with the client)
    operate    every layer but client        (`relored`: starts and administers the others)

The writer and the reader never import each other, and nothing imports the CLI package:
``client`` is a leaf (test_nothing_imports_the_cli_package, without exceptions). Read statically from every module's
AST, imports inside functions included, so a lazy import cannot hide a crossing.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("contract", "lens", "client", "extract", "serve", "operate")
ALLOWED = {
    "contract": {"contract"},
    "lens": {"lens", "contract"},
    "client": {"client", "contract", "lens"},
    "extract": {"extract", "contract"},
    "serve": {"serve", "contract", "lens"},
    "operate": set(LAYERS) - {"client"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] == "relore" and len(parts) > 1 and parts[1] in LAYERS:
        return parts[1]
    return None


def _modules(layer: str) -> list[Path]:
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"no modules under {layer}/"
    return files


def _offending(layer: str, wrong) -> str:
    return "\n".join(
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _modules(layer)
        for line, name in _imports(path)
        if wrong(name)
    )


@pytest.mark.parametrize("layer", LAYERS)
def test_no_layer_imports_a_layer_above_it(layer):
    crossings = _offending(layer, lambda name: _layer_of(name) not in (None, *ALLOWED[layer]))
    assert not crossings, crossings


@pytest.mark.parametrize("layer", LAYERS)
def test_no_relative_imports_that_would_hide_a_crossing(layer):
    relative = _offending(layer, lambda name: name.startswith("."))
    assert not relative, relative


def _optional_lines(path: Path) -> set[int]:
    """Lines of imports guarded by ``try: … except ImportError``: a feature that works
    without the package (PyYAML for a rules topics file; JSON needs nothing)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Try):
            continue
        guarded = any(
            isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
            for h in node.handlers
        )
        if guarded:
            for stmt in node.body:
                if isinstance(stmt, ast.Import | ast.ImportFrom):
                    lines.add(stmt.lineno)
    return lines


def test_nothing_imports_the_cli_package():
    """``relore.client`` is the CLI and the MCP server: a library both ends need (the
    renderer, the code lens) lives in ``contract`` or ``lens``, never inside it."""
    crossings = "\n".join(
        _offending(layer, lambda name: _layer_of(name) == "client")
        for layer in LAYERS
        if layer != "client"
    ).strip()
    assert not crossings, crossings


def test_contract_imports_only_the_standard_library_and_itself():
    foreign = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _modules("contract")
        for line, name in _imports(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not name.startswith("relore.contract")
        and name != "__future__"
        and line not in _optional_lines(path)
    ]
    assert not foreign, "\n".join(foreign)


def test_the_layer_check_sees_a_crossing_written_inside_a_function(tmp_path):
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from relore.serve import app\n")
    assert (2, "relore.serve") in _imports(module)
    assert _layer_of("relore.serve.app") == "serve"
    assert "serve" not in ALLOWED["extract"]
    bare = tmp_path / "bare.py"
    bare.write_text("import yaml\n")
    assert _optional_lines(bare) == set()
