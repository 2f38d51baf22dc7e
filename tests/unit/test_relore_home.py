"""Where `$RELORE_HOME` is when it is not set (#37 item 10): found as git finds its repository.

From the working directory up: the first directory holding `.relore`, or relore's dbt project
root (its `dbt_project.yml` says `profile: relore`: dbt, run there, computes `$PWD/.relore` in
profiles.yml, so relored must land on the same home). `relored db url` never prints a URL to
a home that does not exist: it says so in one line naming `RELORE_HOME`.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from relore.contract import places
from relore.operate import cli as relored

PROJECT = "name: relore\nversion: '0.1.0'\nconfig-version: 2\nprofile: relore\n"


def _no_home_above(where: Path) -> None:
    held = [p for p in (where, *where.parents) if (p / ".relore").exists()]
    assert not held, f"a .relore above the test's directory would answer for it: {held}"


def _relored(*argv: str, env: dict | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = relored.main(list(argv), env={} if env is None else env, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _project(root: Path, *, home: bool) -> Path:
    (root / "models").mkdir(parents=True)
    (root / "dbt_project.yml").write_text(PROJECT)
    if home:
        (root / ".relore").mkdir()
        (root / ".relore" / "pgpass").write_text(
            "*:5432:*:relore_writer:w1\n*:5432:*:relore_reader:r1\n"
        )
    return root


def test_db_url_from_a_directory_with_no_home_says_so_naming_relore_home(tmp_path, monkeypatch):
    elsewhere = tmp_path / "home" / "someone"
    elsewhere.mkdir(parents=True)
    _no_home_above(elsewhere)
    monkeypatch.chdir(elsewhere)
    for argv in (("db", "url", "--reader"), ("db", "url")):
        code, out, err = _relored(*argv)
        assert (code, out) == (1, ""), (code, out)
        assert len(err.strip().splitlines()) == 1 and "RELORE_HOME" in err, err
        assert str(elsewhere / ".relore") not in out


def test_db_url_from_models_finds_the_home_at_the_project_root(tmp_path, monkeypatch):
    root = _project(tmp_path / "checkout", home=True)
    monkeypatch.chdir(root / "models")
    code, out, err = _relored("db", "url", "--reader")
    assert code == 0, err
    assert f"host={root.resolve() / '.relore' / 'run'}" in out and "relore_reader:r1@" in out


def test_a_project_root_without_a_home_yet_is_said_not_printed(tmp_path, monkeypatch):
    root = _project(tmp_path / "fresh", home=False)
    monkeypatch.chdir(root / "models")
    code, out, err = _relored("db", "url")
    assert (code, out) == (1, "")
    assert str(root.resolve() / ".relore") in err and "relored db start" in err
    # where `relored db start` would make it: the project root, where dbt looks
    assert places.relore_home({}) == root.resolve() / ".relore"


def test_the_home_is_found_walking_up_and_the_project_root_stops_the_walk(tmp_path, monkeypatch):
    (tmp_path / "work" / ".relore").mkdir(parents=True)
    deep = tmp_path / "work" / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert places.relore_home({}) == (tmp_path / "work" / ".relore").resolve()
    # a relore checkout below it keeps its own home, as dbt run at its root does
    root = _project(tmp_path / "work" / "checkout", home=False)
    monkeypatch.chdir(root / "models")
    assert places.relore_home({}) == root.resolve() / ".relore"
    # another dbt project is not relore's: the walk goes past it
    other = tmp_path / "work" / "other"
    (other / "models").mkdir(parents=True)
    (other / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    monkeypatch.chdir(other / "models")
    assert places.relore_home({}) == (tmp_path / "work" / ".relore").resolve()


def test_relore_home_set_wins_and_is_never_searched(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert places.relore_home({"RELORE_HOME": str(tmp_path / "x")}) == tmp_path / "x"


@pytest.mark.parametrize("action", ["status", "stop"])
def test_status_and_stop_of_no_home_print_no_url_to_it(tmp_path, monkeypatch, action):
    elsewhere = tmp_path / "nowhere"
    elsewhere.mkdir()
    _no_home_above(elsewhere)
    monkeypatch.chdir(elsewhere)
    code, out, err = _relored("db", action)
    assert code == 0, err
    assert ("state: absent" if action == "status" else "state: not running") in out, out
    assert "postgresql://" not in out  # no URL to a home that does not exist
