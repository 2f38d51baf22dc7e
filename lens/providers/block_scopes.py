"""Which identifiers are local in a language whose scopes are blocks (JavaScript and
TypeScript, Go, Rust): the walk their providers' ``local_places`` share.

``relore map`` matches references to definitions by spelling, so a parameter ``params`` or a
closure's ``r`` read as uses of a function ``params`` or ``r`` another file defines. A local
names nothing outside its function or block: it is no use of any definition
(``engine.LOCAL``).

A language module says, for one identifier node, whether it binds a local and where that
binding is seen: ``binding(node) -> (start byte, end byte) | None`` (a parameter, its
function; a ``let``, the rest of its block; ``None``: a use, or a name the module binds,
which is the map's). This module does the rest, one name at a time (so
``engine.extract_names`` finds what ``engine.extract`` does): a binding is local, and so is
every use of the name whose bytes fall inside one of its local bindings' spans. Only local
bindings are collected, so the innermost one need not be found: any span holding the use
is a local's (a module's binding holds every use but is never collected).
"""

from __future__ import annotations

import bisect

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def local_places(
    nodes_by_name: dict[str, list],
    binding: Callable[[Any], tuple[int, int] | None],
    variables: frozenset[str],
) -> set[int]:
    """The start bytes of the occurrences (each name's identifier nodes) that are local.
    Only nodes whose type is in ``variables`` can be (a property or field name is not)."""
    local: set[int] = set()
    for nodes in nodes_by_name.values():
        uses: list[int] = []
        spans: list[tuple[int, int]] = []
        for node in nodes:
            if node.type not in variables:
                continue
            span = binding(node)
            if span is None:
                uses.append(node.start_byte)
            else:
                local.add(node.start_byte)
                spans.append(span)
        if not spans or not uses:
            continue
        spans.sort()
        starts = [start for start, _end in spans]
        reach = []  # the furthest end of the spans starting at or before each
        furthest = -1
        for _start, end in spans:
            furthest = max(furthest, end)
            reach.append(furthest)
        for at in uses:
            i = bisect.bisect_right(starts, at) - 1
            if i >= 0 and reach[i] > at:
                local.add(at)
    return local


def enclosing(node: Any, kinds: frozenset[str] | dict) -> Any:
    """The nearest ancestor of ``node`` whose type is one of ``kinds`` (None: none is)."""
    current = node.parent
    while current is not None and current.type not in kinds:
        current = current.parent
    return current


def is_field(parent: Any, child: Any, field: str) -> bool:
    """Whether ``child`` is (one of) ``parent``'s ``field``."""
    return any(found.id == child.id for found in parent.children_by_field_name(field))


def whole(node: Any) -> tuple[int, int]:
    return (node.start_byte, node.end_byte)
