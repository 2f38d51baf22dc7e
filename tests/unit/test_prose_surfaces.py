"""Prose is code: every surface that describes the client names every verb it ships, and
every runnable example of a repository-scoped verb carries --repo. The verb list comes
from the parser, never from a copy."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from relore.client.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
SURFACES = ("README.md", "AGENTS.md")
REPO_SCOPED = {"search", "thread", "inflight", "rules", "why", "symbol", "grep", "copies"}


def shipped_verbs() -> list[str]:
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.choices and a.dest == "verb"]
    return sorted(subparsers.choices)


@pytest.mark.parametrize("surface", SURFACES)
def test_every_surface_names_every_shipped_verb(surface):
    text = (ROOT / surface).read_text()
    missing = [v for v in shipped_verbs() if not re.search(rf"\brelore {v}\b", text)]
    assert not missing, f"{surface} never shows: {', '.join('relore ' + v for v in missing)}"


@pytest.mark.parametrize("surface", SURFACES)
def test_examples_of_repo_scoped_verbs_carry_repo(surface):
    text = (ROOT / surface).read_text()
    offenders = []
    for line in text.splitlines():
        for verb in REPO_SCOPED & set(shipped_verbs()):
            for example in re.findall(rf"relore {verb}\b[^`\n]*", line):
                addressed = re.match(
                    rf"relore {verb} (?:[\w.-]+/[\w.-]+#|https?://[^/\s]+/[\w.-]+/[\w.-]+/"
                    r"(?:issues|pull)/)[0-9N]",  # o/n#N, or a pasted URL naming o/n
                    example,
                )
                if (
                    "--repo" not in example
                    # search may name an owner's repositories instead (#39)
                    and not (verb == "search" and "--org" in example)
                    and not addressed
                    and not example.rstrip().endswith(verb)
                ):
                    offenders.append(example)
    assert not offenders, offenders


def test_help_lists_every_verb():
    help_text = build_parser().format_help()
    assert all(v in help_text for v in shipped_verbs())
