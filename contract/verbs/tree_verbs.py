"""The verbs answered without the daemon: the code lens over the caller's own tree (map,
defs, refs), and ``relore mcp``. No route: the command line and the MCP tools only."""

from __future__ import annotations

from relore.contract import limits
from relore.contract.verbs.common import page_flags
from relore.contract.verbs.shape import Param, Verb

_OFFSET = Param("offset", "int", "skip this many rows first", low=0, default=0)


def _rows(cap: int) -> Param:
    return Param("limit", "limit", f"rows, 1-{cap}", high=cap, default=cap, unit="rows per page")


def _tree() -> list[Param]:
    """defs/refs read a tree named as map's is: a positional PATH; ``--path`` is the old
    spelling, kept (``client/cli.py`` refuses both at once when they differ)."""
    return [
        Param("path", "string", "directory or file to read (default .)", positional=True),
        Param(
            "path_option",
            "string",
            "the same as PATH",
            on="cli",
            flags=("--path",),
            metavar="PATH",
        ),
    ]


MAP = Verb(
    "map",
    "the tree's defined names, ranked (offline, tree-sitter)",
    [
        Param("path", "string", "directory or file (default .)", positional=True, default="."),
        Param(
            "focus",
            "many",
            "rank the tree as seen from this file or directory (inside PATH; repeatable)",
            metavar="PATH",
        ),
        _rows(limits.MAP_CAP),
        _OFFSET,
        *page_flags("the page"),
    ],
    purpose="The definitions the other files of your working tree use most, ranked "
    "(offline, tree-sitter; paths are relative to where the MCP server was started, and "
    "nothing outside that tree is read). Call it first in an unfamiliar tree.",
    source="tree",
)

DEFS = Verb(
    "defs",
    "where NAME is defined (offline, tree-sitter)",
    [
        Param(
            "name",
            "string",
            "an identifier: function, method, class, type",
            positional=True,
            required=True,
        ),
        *_tree(),
        _rows(limits.DEFS_CAP),
        _OFFSET,
        *page_flags("the page"),
    ],
    purpose="Where a name is defined in your working tree (offline, tree-sitter).",
    source="tree",
)

REFS = Verb(
    "refs",
    "every occurrence of NAME, by kind (offline, tree-sitter)",
    [
        Param("name", "string", "an identifier", positional=True, required=True),
        *_tree(),
        Param("kind", "choice", choices=("definition", "call", "attribute", "name")),
        _rows(limits.REFS_CAP),
        _OFFSET,
        *page_flags("the page"),
    ],
    purpose="Every occurrence of a name in your working tree, each saying what it is "
    "(definition, call, attribute, name). Call it before renaming or changing a signature.",
    source="tree",
)

MCP = Verb(
    "mcp",
    "these verbs as Model Context Protocol tools over stdio (needs relore[mcp])",
    description="An MCP server on stdin/stdout for an agent harness: every verb above "
    "but mcp is a read-only tool answering with the text relore prints (and the page "
    "as structured content); a failure is a tool error with the same message and exit "
    "status. map/defs/refs read only the tree the server was started in (a path outside "
    "it, or through a symbolic link, is refused). RELORE_API and "
    "RELORE_API_TOKEN as for every verb; rules never repeat within one MCP session.",
)
