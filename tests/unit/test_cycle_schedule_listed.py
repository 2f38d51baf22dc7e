"""What `relored cycle` calls a complete backfill and a late poll has two sides: the cycle and
`relored doctor` read extract/schedule.py, `relore status` reads marts.repo_freshness, built
from macros/cycle_schedule.sql. A pass added to one side only would call a repository
backfilled (or behind) in one place and not in the other."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from relore.extract import schedule

MACRO = Path(__file__).resolve().parents[2] / "macros" / "cycle_schedule.sql"


def _macro_body(name: str) -> str:
    text = MACRO.read_text(encoding="utf-8")
    found = re.search(rf"macro {name}\(\)\s*-?%}}(.*?){{%-? endmacro", text, re.S)
    assert found, f"no macro {name}() in {MACRO}"
    return found.group(1)


def test_the_marts_backfill_passes_are_the_cycles_in_its_order():
    listed = re.search(r"return\((\[.*?\])\)", _macro_body("backfill_steps"), re.S)
    assert listed, "backfill_steps() returns no list"
    assert tuple(ast.literal_eval(listed.group(1))) == schedule.BULK_STEPS


def test_the_marts_call_a_repository_behind_after_the_cycles_time():
    found = re.fullmatch(r"\s*interval '(\d+) minutes'\s*", _macro_body("poll_behind_after"))
    assert found, _macro_body("poll_behind_after")
    assert int(found.group(1)) * 60 == schedule.BEHIND_AFTER.total_seconds()
