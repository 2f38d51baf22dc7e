"""One file in, one record out: its definitions and every identifier occurrence, by kind.

The record is plain tuples, lists and dicts so the cache can store it as it is:

``(has_error, definitions, occurrences, exports)`` where a definition is
``(name, kind, qualified, line, column, start_byte, end_byte, name_byte)``,
``occurrences`` maps a name to ``[(name_byte, line, column, kind_code), ...]`` and
``exports`` is what the file declares public (``Provider.exports``; None in a language
without such declarations).

Occurrences are keyed on the name's byte span: however many patterns describe one
identifier, it is one row, with the strongest kind (``KINDS`` order). ``kind_code`` is the
kind's index, plus ``THROUGH`` when a pattern also captured the identifier as an attribute:
it was reached through an object or a path (``x.f()``, ``T::f()``), never by its bare name
(``f()``). ``kind(code)`` and ``through(code)`` read it back.
"""

from __future__ import annotations

from relore.client.code.providers.base import Provider

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

KINDS = ("definition", "call", "attribute", "name")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
THROUGH = 4  # flag: reached through an object (also captured as @attribute)
DEFINITION = KIND_CODE["definition"]
ATTRIBUTE = KIND_CODE["attribute"]


def kind(code: int) -> str:
    return KINDS[code & 3]


def through(code: int) -> bool:
    return bool(code & THROUGH)


Definition = tuple[str, str, str, int, int, int, int, int]
Occurrence = tuple[int, int, int, int]
Record = tuple[bool, list[Definition], dict[str, list[Occurrence]], tuple | None]

parses = 0  # files parsed by this process; the cache tests count it


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _definitions(provider: Provider, source: bytes, root: Any, query: Any, ts: Any) -> list:
    items: dict[int, tuple] = {}
    for _pattern, captures in ts.QueryCursor(query).matches(root):
        names = captures.get("name")
        if not names:
            continue
        name_node = names[0]
        kind = node = None
        for capture, nodes in captures.items():
            if capture.startswith("definition."):
                kind, node = capture.split(".", 1)[1], nodes[0]
            elif capture == "scope":
                kind, node = "scope", nodes[0]
        if node is None or name_node.start_byte in items:
            continue
        items[name_node.start_byte] = (node.start_byte, node.end_byte, kind, node, name_node)
    ordered = sorted(items.values(), key=lambda item: (item[0], -item[1]))
    stack: list[tuple[int, str, str]] = []  # (end_byte, kind, qualified)
    found: list[Definition] = []
    for start, end, kind, node, name_node in ordered:
        while stack and stack[-1][0] <= start:
            stack.pop()
        name = _text(source, name_node)
        parent = stack[-1] if stack else None
        if parent is not None:
            qualified = f"{parent[2]}.{name}"
            if kind == "function" and parent[1] in provider.method_containers:
                kind = "method"
        else:
            prefix = provider.qualifier(node, source)
            qualified = f"{prefix}.{name}" if prefix else name
        stack.append((end, kind, qualified))
        if kind == "scope":
            continue
        point = name_node.start_point
        found.append(
            (
                name,
                kind,
                qualified,
                point.row + 1,
                point.column + 1,
                start,
                end,
                name_node.start_byte,
            )
        )
    return found


# A syntax error tree-sitter recovers as one ERROR node holding a long run of bare tokens
# (``{{{{…``, ``(*(*…``, 64 kB of them) costs its queries time growing with the square of the
# run: 3.4 s a query at 64 kB, ~15 min at a 1 MB file, from a file anyone can commit. Real
# code's errors hold a handful; past this many in a row the file's record is TANGLED.
TANGLE_RUN = 256
TANGLED = 2  # a record's has_error: errors too tangled to read, nothing else in the record


def tangled(root: Any) -> bool:
    """Whether an ERROR node below ``root`` holds more than ``TANGLE_RUN`` unnamed children
    in a row. Linear: only subtrees holding an error are walked."""
    if not root.has_error:
        return False
    pending = [root]
    while pending:
        node = pending.pop()
        run = 0
        error = node.is_error
        for child in node.children:
            if error:
                run = 0 if child.is_named else run + 1
                if run > TANGLE_RUN:
                    return True
            if child.has_error:
                pending.append(child)
    return False


def extract(provider: Provider, source: bytes) -> Record:
    global parses
    ts, parser, defs_query, refs_query = provider.load()
    tree = parser.parse(source)
    parses += 1
    root = tree.root_node
    if tangled(root):
        return (TANGLED, [], {}, None)
    definitions = _definitions(provider, source, root, defs_query, ts)
    strongest: dict[int, tuple[int, Any]] = {}
    dotted: set[int] = set()
    for capture, nodes in ts.QueryCursor(refs_query).captures(root).items():
        code = KIND_CODE[capture]
        for node in nodes:
            start = node.start_byte
            if code == ATTRIBUTE:
                dotted.add(start)
            seen = strongest.get(start)
            if seen is None or code < seen[0]:
                strongest[start] = (code, node)
    definition_bytes = {d[7] for d in definitions}
    occurrences: dict[str, list[Occurrence]] = {}
    for start, (code, node) in sorted(strongest.items()):
        name = source[start : node.end_byte].decode("utf-8", "replace")
        point = node.start_point
        if start in definition_bytes:
            code = 0
        elif start in dotted:
            code |= THROUGH
        occurrences.setdefault(name, []).append((start, point.row + 1, point.column + 1, code))
    for name, _kind, _q, line, column, _s, _e, name_byte in definitions:
        if name_byte not in strongest:  # a name node no reference pattern describes
            occurrences.setdefault(name, []).append((name_byte, line, column, 0))
    return (root.has_error, definitions, occurrences, provider.exports(root, source))


def counts(occurrences: dict[str, list[Occurrence]]) -> dict[str, tuple[int, int]]:
    """Per name, its references (definitions left out): ``(bare, through an object)``,
    what ``relore map`` ranks by, kept beside the record so a map never walks occurrences."""
    summary = {}
    for name, found in occurrences.items():
        bare = through = 0
        for occurrence in found:
            code = occurrence[3]
            if code & THROUGH:
                through += 1
            elif code != DEFINITION:
                bare += 1
        if bare or through:
            summary[name] = (bare, through)
    return summary
