"""The verbs the daemon answers from its working clone of a repository (``relored clone``):
why, symbol, grep, copies."""

from __future__ import annotations

from relore.contract import limits
from relore.contract.verbs.common import page_flags, repo
from relore.contract.verbs.shape import Param, Verb


def _rows(cap: int, help: str) -> Param:
    return Param("limit", "limit", help, high=cap, unit="rows per page")


def _under(help: str, required: bool | str = False) -> Param:
    return Param("path", "path", help, required=required, most=limits.MAX_PATH_CHARS)


WHY = Verb(
    "why",
    "who wrote a line, the pull request that carried it, and what reviewers said",
    [
        Param(
            "target",
            "path_line",
            "e.g. src/app.py:42",
            on="cli mcp",  # sent as path and line
            positional=True,
            required=True,
            metavar="PATH:LINE",
        ),
        repo(required=True),
        Param(
            "path",
            "path",
            "relative to the root",
            on="http",
            required=True,
            most=limits.MAX_PATH_CHARS,
        ),
        Param(
            "line",
            "int",
            "1-based line at HEAD",
            on="http",
            required=True,
            low=1,
            high=limits.MAX_LINE,
        ),
        *page_flags(),
    ],
    description="Blames PATH:LINE in the daemon's clone at HEAD and returns the pull "
    "request that carried the commit with the review comments anchored near the line, "
    "then two lists: the line's revision chain (git log -L) and its origin chain (git "
    "log -S on its most distinctive word that reaches further back).",
    purpose="Why a line is as it is: blames PATH:LINE in the daemon's clone at HEAD and "
    "returns the pull request that carried it, the review comments near the line, and the "
    "line's revision and origin chains. Call it before changing or deleting a line whose "
    "purpose is unclear.",
    route="why",
    summary="Blame a line: the pull request that carried it, review comments near it, its "
    "revision chain and its origin chain",
    source="clone",
)

SYMBOL = Verb(
    "symbol",
    "where NAME is defined, in the daemon's clone at HEAD",
    [
        repo(required=True),  # first: the daemon names a bad repo before a bad name
        Param("name", "identifier", "an identifier", positional=True, required=True),
        _under("only under this directory or file"),
        _rows(limits.DEFS_CAP, f"rows, 1-{limits.DEFS_CAP}"),
        *page_flags(),
    ],
    purpose="Where a name is defined in the daemon's clone of the repository at HEAD. For "
    "the indexed repository's code; for your own working tree use `defs`.",
    route="code/symbol",
    summary="Definitions of a name in the clone (the code lens over HEAD)",
    source="clone",
)

GREP = Verb(
    "grep",
    "git grep over the daemon's clone at HEAD, capped",
    [
        Param(
            "pattern",
            "pattern",
            "an extended regular expression",
            positional=True,
            required=True,
            most=limits.MAX_PATTERN_CHARS,
        ),
        repo(required=True),
        Param("fixed", "flag", "PATTERN is a fixed string"),
        Param("ignore_case", "flag", "ignore case", flags=("-i", "--ignore-case")),
        _under("only under this path"),
        _rows(limits.CLONE_ROWS, f"lines, 1-{limits.CLONE_ROWS}"),
        *page_flags(),
    ],
    purpose="git grep over the daemon's clone of the repository at HEAD, capped, every "
    "match counted. For the indexed repository's code; your own tree is your shell's.",
    route="code/grep",
    summary="git grep over the clone, capped; every match counted",
    source="clone",
)

COPIES = Verb(
    "copies",
    "the `# Copied from` markers that point at NAME (HuggingFace style)",
    [
        repo(required=True),  # first: the daemon names a bad repo before a bad name
        Param(
            "name",
            "dotted",
            "e.g. LlamaRMSNorm or modeling_llama.LlamaMLP",
            positional=True,
            required=True,
        ),
        _rows(limits.CLONE_ROWS, f"rows, 1-{limits.CLONE_ROWS}"),
        *page_flags(),
    ],
    purpose="The `# Copied from` markers that point at a name (HuggingFace style). Call it "
    "before changing a class or function others copy, so the copies change with it.",
    route="code/copies",
    summary="`# Copied from X` markers whose target is the name, with the copy under each",
    source="clone",
)
