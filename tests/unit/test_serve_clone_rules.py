"""The rules `why` and the clone verbs decide by, without a database: which lines decline
the pickaxe, which word goes first, what a PR subject names, which paths a request may
name, and a git call that overruns its timeout. Git here is real git."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from relore.contract import places
from relore.operate import clone as clone_mod
from relore.serve import inputs
from relore.serve.clone.copies import _points_at
from relore.serve.clone.git import Budget, Git, GitTimeout
from relore.serve.clone.why import history
from relore.serve.clone.why import lines as why_lines
from relore.serve.errors import BadRequest

PY = [
    "# Copyright 2024 The Acme Team. All rights reserved.",
    "# Licensed under the Apache License, Version 2.0",
    "",
    '"""Module docstring."""',
    "import os",
    "",
    "def f(*args, **kwargs):",
    "    # explain the next line",
    "    return scale_widget(args) * 2",
    "    )",
]
C = [
    "/*",
    " * Copyright (c) 2024 Acme.",
    " * SPDX-License-Identifier: MIT",
    " */",
    "#include <stdio.h>",
    "/* a note */",
    "int main(void) { return 0; }",
]


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        (PY, 1, "licence header"),
        (PY, 2, "licence header"),
        (PY, 3, "blank"),
        (PY, 8, "comment"),
        (PY, 9, None),
        (PY, 7, None),  # `*args` is code, not the inside of a block comment
        (C, 2, "licence header"),
        (C, 4, "licence header"),
        (C, 6, "comment"),
        (C, 7, None),
    ],
)
def test_a_line_with_no_code_is_told_apart_from_a_line_of_code(lines, line, reason):
    path = "src/module.py" if lines is PY else "src/main.c"
    assert why_lines.decline_reason(lines, line, path) == reason


@pytest.mark.parametrize(
    ("path", "text", "reason"),
    [
        ("q.sql", "-- why we join twice", "comment"),
        ("x.py", "    % (name, value))", None),  # a continued format, not a comment
        ("x.py", "    * scale", None),
        ("x.c", "--count;", None),
        ("x.tex", "% a remark", "comment"),
        ("x.ts", "// a remark", "comment"),
        ("x.ts", "# not a comment in TypeScript", None),
    ],
)
def test_comment_syntax_follows_the_files_language(path, text, reason):
    assert why_lines.decline_reason(["x = 1", text], 2, path) == reason


def test_a_comment_after_the_code_starts_is_a_comment_not_a_licence():
    lines = ["import os", "# Copyright notice moved here by mistake", "x = 1"]
    assert why_lines.decline_reason(lines, 2, "x.py") == "comment"


def test_the_rarest_word_in_the_file_is_walked_first_and_keywords_never():
    text = "\n".join(PY)
    assert why_lines.candidates("    return scale_widget(args) * 2", text) == [("scale_widget", 1)]
    ranked = why_lines.candidates("value = lookup(value, scale_widget)", text + "\nlookup lookup")
    assert [w for w, _ in ranked] == ["value", "scale_widget", "lookup"]


@pytest.mark.parametrize(
    ("subject", "number"),
    [
        ("Fix the widget (#123)", 123),
        ('Revert "Fix (#12)" (#34)', 34),
        ("Merge pull request #77 from acme/topic", 77),
        ("Use four", None),
        ("Mention #12 without parentheses", None),
    ],
)
def test_a_commit_subject_names_the_pull_request_squash_or_merge(subject, number):
    assert history.subject_number(subject) == number


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src\\pkg\\app.py", "src/pkg/app.py"),
    ],
)
def test_a_relative_path_is_normalised(value, expected):
    assert inputs.parse("why", {"repo": "o/n", "path": value, "line": "1"})["path"] == expected


@pytest.mark.parametrize(
    "value", ["../x.py", "a/../../x.py", "/etc/passwd", "C:/x.py", "~/x.py", "a\x00b", "a\nb", "."]
)
def test_a_path_that_leaves_the_repository_or_is_not_one_is_refused(value):
    with pytest.raises(BadRequest):
        inputs.parse("why", {"repo": "o/n", "path": value, "line": "1"})


@pytest.mark.parametrize("value", ["0", "-1", "x", "", "1.5", "99999999999"])
def test_a_line_that_is_not_a_positive_whole_number_is_refused(value):
    with pytest.raises(BadRequest):
        inputs.parse("why", {"repo": "o/n", "path": "a.py", "line": value})


@pytest.mark.parametrize("repo", ["../..", "acme/..", "../x", "a/.", "nope", "a/b/c", "a/b\n"])
def test_a_repo_that_would_leave_the_clones_dir_is_refused(repo):
    with pytest.raises(ValueError):
        places.clone_dir(repo, {"RELORE_CLONES_DIR": "/tmp/clones"})


def test_clone_dir_is_lower_case_under_relore_clones_dir():
    where = places.clone_dir("Acme/Widgets", {"RELORE_CLONES_DIR": "/srv/clones"})
    assert where == Path("/srv/clones/acme/widgets")


def test_clone_dir_defaults_under_relore_home(tmp_path):
    where = places.clone_dir("acme/widgets", {"RELORE_HOME": str(tmp_path)})
    assert where == tmp_path.resolve() / "clones" / "acme" / "widgets"


def test_a_stored_url_never_carries_credentials():
    assert (
        clone_mod.without_credentials("https://x-access-token:ghs_secret@github.com/acme/w")
        == "https://github.com/acme/w"
    )
    assert clone_mod.without_credentials("/srv/mirror/w.git") == "/srv/mirror/w.git"


@pytest.mark.parametrize(
    ("target", "name", "member"),
    [
        ("transformers.models.llama.modeling_llama.LlamaRMSNorm", "LlamaRMSNorm", ""),
        ("transformers.models.llama.modeling_llama.LlamaMLP.forward", "LlamaMLP", "forward"),
        ("a.modeling_llama.LlamaMLP", "modeling_llama.LlamaMLP", ""),
        ("a.b.LlamaRMSNormX", "LlamaRMSNorm", None),
        ("a.b.MyLlamaRMSNorm", "LlamaRMSNorm", None),
    ],
)
def test_a_copy_marker_points_at_a_name_on_whole_dotted_segments(target, name, member):
    assert _points_at(target, name) == member


def test_a_git_call_past_its_timeout_is_killed_and_reported(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    budget = Budget(call_timeout_s=0.3)
    git = Git(tmp_path, budget)

    async def slow():
        # a real git process, made slow by a shell alias (git runs `sleep`)
        await git.run(["-c", "alias.slow=!sleep 3", "slow"], what="git slow")

    with pytest.raises(GitTimeout):
        asyncio.run(slow())
    report = budget.report()
    assert report["timed_out"] == ["git slow: stopped after 0.3s"]
    assert report["subprocesses"] == 1
    assert report["elapsed_ms"] < 2500


def test_the_pickaxe_budget_refuses_a_fourth_walk(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    budget = Budget(max_pickaxe_walks=3)
    budget.pickaxe_walks = 3
    git = Git(tmp_path, budget)
    from relore.serve.clone.git import BudgetSpent

    with pytest.raises(BudgetSpent):
        asyncio.run(git.run(["log", "-S", "x"], what="git log -S x", walk="pickaxe"))
    assert budget.subprocesses == 0
