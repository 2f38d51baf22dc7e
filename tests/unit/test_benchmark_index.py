"""benchmarks/README.md is the index of benchmarks/results/ (#38): a results file nobody links
is a figure nobody finds, and a link to a file that is gone is a promise broken.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
LINK = re.compile(r"\]\((results/[^)#\s]+\.md)(?:#[^)]*)?\)")


def index_problems(benchmarks: Path) -> list[str]:
    """Results files the index does not link, and links to results files that do not exist."""
    linked = set(LINK.findall((benchmarks / "README.md").read_text()))
    present = {f"results/{path.name}" for path in (benchmarks / "results").glob("*.md")}
    return [
        f"not linked from benchmarks/README.md: {name}" for name in sorted(present - linked)
    ] + [f"linked but missing: benchmarks/{name}" for name in sorted(linked - present)]


def test_every_results_file_is_linked_from_the_index_and_every_link_exists():
    assert (BENCHMARKS / "results").is_dir(), "benchmarks/results/ holds the figures"
    assert index_problems(BENCHMARKS) == []


def test_index_check_names_an_unlinked_file_and_a_dead_link(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "listed.md").write_text("# listed\n")
    (tmp_path / "results" / "orphan.md").write_text("# orphan\n")
    (tmp_path / "README.md").write_text(
        "| [listed.md](results/listed.md) |\n| [gone.md](results/gone.md) |\n"
    )
    assert index_problems(tmp_path) == [
        "not linked from benchmarks/README.md: results/orphan.md",
        "linked but missing: benchmarks/results/gone.md",
    ]


def test_every_results_file_opens_with_a_title():
    untitled = [
        path.name
        for path in sorted((BENCHMARKS / "results").glob("*.md"))
        if not path.read_text().startswith("# ")
    ]
    assert not untitled, f"results files without a '# ' title line: {untitled}"
