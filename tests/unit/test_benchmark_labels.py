"""Benchmark labels change in commits of their own, never beside the code they score (#19).

A label written in the same commit as a ranking change can be fitted to it; the rule is that
labels land first, alone, and tuning comes after. Checked over the repository's history from
the commit that introduced the rule (ad50614): a commit that touches a label file touches
nothing outside ``benchmarks/`` but the docs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LABELS = (
    "benchmarks/rules/shop-tasks.jsonl",
    "benchmarks/quality/paraphrase.jsonl",
    "benchmarks/quality/change.jsonl",
    "benchmarks/quality/why.jsonl",
    "benchmarks/quality/eval.jsonl",
    "benchmarks/code_lens_entry_points.jsonl",
    "benchmarks/code_lens_tuning_entry_points.jsonl",
)
# What a label commit may also touch: the benchmarks' own files and prose.
ALLOWED_BESIDE = ("benchmarks/", "README.md", "AGENTS.md", "docs/")
RULE_SINCE = "ad50614"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)} failed: {done.stderr.strip()}"
    return done.stdout


def label_offenders(root: Path, since: str) -> dict[str, list[str]]:
    """Commits after ``since`` that touch a label file and something outside the allowed
    paths. Commits whose parent is not in this clone are left out (a shallow clone's boundary
    commit lists the whole tree as its change); when ``since`` is not in the clone, every
    commit with a parent is checked."""
    known = subprocess.run(
        ["git", "cat-file", "-e", f"{since}^{{commit}}"], cwd=root, capture_output=True
    )
    span = [f"{since}..HEAD"] if known.returncode == 0 else ["HEAD"]
    offenders = {}
    for row in git(root, "log", "--format=%H %P", *span, "--", *LABELS).splitlines():
        sha, *parents = row.split()
        if not parents:
            continue
        files = [f for f in git(root, "show", "--name-only", "--format=", sha).splitlines() if f]
        other = [f for f in files if f not in LABELS and not f.startswith(ALLOWED_BESIDE)]
        if other:
            offenders[sha[:8]] = other
    return offenders


def test_a_label_file_never_changes_beside_the_code_it_scores():
    assert (ROOT / ".git").exists(), "the label rule is checked on a git checkout"
    assert label_offenders(ROOT, RULE_SINCE) == {}


def test_label_rule_catches_labels_committed_with_ranking_code(tmp_path):
    def commit(files: dict[str, str], message: str) -> str:
        for name, text in files.items():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
        git(tmp_path, "add", "-A")
        git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
        return git(tmp_path, "rev-parse", "HEAD").strip()

    git(tmp_path, "init", "-q")
    since = commit({LABELS[0]: "{}\n", "serve/rank.py": "A = 1\n"}, "start")
    labels_alone = {
        LABELS[0]: "{}\n{}\n",
        "benchmarks/README.md": "x",
        "benchmarks/results/r.md": "x",
    }
    commit(labels_alone, "labels alone")
    assert label_offenders(tmp_path, since) == {}
    tuned = commit({LABELS[0]: "{}\n{}\n{}\n", "serve/rank.py": "A = 2\n"}, "tuned")
    assert label_offenders(tmp_path, since) == {tuned[:8]: ["serve/rank.py"]}


def test_rules_tasks_split_half_held_out_by_whole_sessions():
    tasks = [
        json.loads(line) for line in (ROOT / LABELS[0]).read_text().splitlines() if line.strip()
    ]
    by_session: dict[str, set[str]] = {}
    for task in tasks:
        by_session.setdefault(task["session"], set()).add(task["split"])
    assert all(len(splits) == 1 for splits in by_session.values()), by_session
    held = sum(task["split"] == "held-out" for task in tasks)
    assert 0.4 <= held / len(tasks) <= 0.5, f"{held} of {len(tasks)} held out"
