"""dbt orders a test by its refs. A test that reads marts through the catalog (not refs)
runs before the marts exist on a first build unless it names them: then it checks nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_secret_scan_runs_after_every_mart():
    marts = {
        path.stem
        for path in (ROOT / "models" / "marts").rglob("*.sql")
        # an ephemeral model (document_versions, the snapshot's input) is no relation
        if "materialized='ephemeral'" not in path.read_text()
    }
    scan = (ROOT / "data-tests" / "assert_no_secret_survives_in_any_mart_text.sql").read_text()
    assert _depends_on(scan) == {"secret_scan_mark"}, "the scan must follow its mark"
    mark = (ROOT / "models" / "build" / "secret_scan_mark.sql").read_text()
    named = _depends_on(mark)
    assert marts - named == set(), "the secret scan would run before these marts are built"
    assert named - marts == set(), "the secret scan names marts that no longer exist"


def _depends_on(sql: str) -> set[str]:
    return set(re.findall(r"--\s*depends_on:\s*\{\{\s*ref\('([\w]+)'\)\s*\}\}", sql))
