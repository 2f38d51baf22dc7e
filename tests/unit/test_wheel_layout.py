"""Packaging: the wheel maps the top-level folders under ``relore/`` and nothing leaks."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a dbt build, a cluster or a wheel of its own: make test-fast skips it
def test_wheel_puts_every_module_under_relore_and_ships_both_commands(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob("relore-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = [n for n in names if n.endswith(".py")]
    assert modules
    stray = [n for n in modules if not n.startswith("relore/")]
    assert not stray, stray
    for package in ("client", "extract", "serve"):
        assert f"relore/{package}/__init__.py" in names
    for asset in ("index.html", "app.js", "app.css"):  # the page at / ships as package data
        assert f"relore/serve/static/{asset}" in names
    assert not any(n.startswith(("relore/tests", "tests/")) for n in names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "relore = relore.client.cli:entry" in text
    assert "relored = relore.operate.cli:entry" in text
