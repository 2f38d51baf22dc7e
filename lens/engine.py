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
(``f()``); plus ``LOCAL`` when the provider finds a bare name bound in its own function,
lambda or comprehension (a parameter, a local variable: ``Provider.local_places``), which
names no definition of any other file. ``kind(code)``, ``through(code)`` and
``local(code)`` read it back.
"""

from __future__ import annotations

from relore.lens.providers.base import Provider

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

KINDS = ("definition", "call", "attribute", "name")
KIND_CODE = {kind: code for code, kind in enumerate(KINDS)}
THROUGH = 4  # flag: reached through an object (also captured as @attribute)
LOCAL = 8  # flag: a parameter or a local variable, bound where it is used
DEFINITION = KIND_CODE["definition"]
ATTRIBUTE = KIND_CODE["attribute"]


def kind(code: int) -> str:
    return KINDS[code & 3]


def through(code: int) -> bool:
    return bool(code & THROUGH)


def local(code: int) -> bool:
    return bool(code & LOCAL)


Definition = tuple[str, str, str, int, int, int, int, int]
Occurrence = tuple[int, int, int, int]
Record = tuple[bool, list[Definition], dict[str, list[Occurrence]], tuple | None]

parses = 0  # files parsed by this process; the cache tests count it


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _definitions(provider: Provider, source: bytes, matches) -> list:
    """The definitions the definitions query's ``matches`` describe (a name's first match
    wins), each qualified by the definitions around it."""
    items: dict[int, tuple] = {}
    for _pattern, captures in matches:
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


def _parse(provider: Provider, source: bytes) -> tuple[Any, Any, Any, Any]:
    """(tree_sitter module, definitions query, references query, the tree's root)."""
    global parses
    ts, parser, defs_query, refs_query = provider.load()
    root = parser.parse(source).root_node  # (a node keeps its tree)
    parses += 1
    return ts, defs_query, refs_query, root


def extract(provider: Provider, source: bytes) -> Record:
    ts, defs_query, refs_query, root = _parse(provider, source)
    if tangled(root):
        return (TANGLED, [], {}, None)
    definitions = _definitions(provider, source, ts.QueryCursor(defs_query).matches(root))
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
    nodes: dict[str, list] = {}
    for start, (_code, node) in sorted(strongest.items()):
        nodes.setdefault(source[start : node.end_byte].decode("utf-8", "replace"), []).append(node)
    local = provider.local_places(nodes)
    occurrences: dict[str, list[Occurrence]] = {}
    for name, found in nodes.items():
        for node in found:
            start = node.start_byte
            code = strongest[start][0]
            point = node.start_point
            if start in definition_bytes:
                code = 0
            elif start in dotted:
                code |= THROUGH
            elif start in local:
                code |= LOCAL
            occurrences.setdefault(name, []).append((start, point.row + 1, point.column + 1, code))
    for name, _kind, _q, line, column, _s, _e, name_byte in definitions:
        if name_byte not in strongest:  # a name node no reference pattern describes
            occurrences.setdefault(name, []).append((name_byte, line, column, 0))
    return (root.has_error, definitions, occurrences, provider.exports(root, source))


def scopable(name: str) -> bool:
    """Whether ``extract_names`` can find ``name``'s rows by its bytes: its UTF-8 must be
    the only spelling a node's text decodes to it from (no U+FFFD, which invalid bytes also
    decode to; no lone surrogate; no NUL, which a record never keeps)."""
    return bool(name) and "\ufffd" not in name and "\0" not in name and _encodes(name)


def _encodes(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def extract_names(provider: Provider, source: bytes, names) -> Record:
    """``extract``'s record scoped to ``names`` (each ``scopable``): for each name exactly
    the rows ``extract`` gives it, and of the definitions those that hold a place of a name
    (every definition of one, each with what encloses it: what ``defs`` of these names and
    ``refs``' scopes read), the same syntax-error flag, and no exports (``map`` reads
    them, and never from a scoped record); without capturing every identifier, or
    matching every definition, of the file.

    Only where a name's bytes sit can a node spell it (a node's text is its bytes decoded,
    and a scopable name has one encoding), so each place its bytes start is looked at: the
    smallest node spanning them must span exactly them. The definitions query runs over
    each such place alone (the definitions holding it: a definition's parents hold it
    too, so each is qualified as in the whole file), then the references query (a byte
    either side, so a zero-width node there is seen too), and the strongest capture
    starting there is kept, as ``extract`` keeps it."""
    ts, defs_query, refs_query, root = _parse(provider, source)
    names = tuple(dict.fromkeys(names))
    if tangled(root):  # no rows; each name kept, so a cached answer still says why
        return (TANGLED, [], {name: [] for name in names}, None)
    spans: list[tuple[str, int, int]] = []  # (name, start, end): where a node spells it
    matches: list = []
    for name in names:
        needle = name.encode("utf-8")
        at = source.find(needle)
        while at >= 0:
            end = at + len(needle)
            node = root.descendant_for_byte_range(at, end)
            if node is not None and node.start_byte == at and node.end_byte == end:
                spans.append((name, at, end))
            at = source.find(needle, at + 1)
    if spans:
        cursor = ts.QueryCursor(defs_query)
        for _name, at, _end in spans:
            cursor.set_byte_range(at, at + 1)
            matches.extend(cursor.matches(root))
    definitions = _definitions(provider, source, matches)
    definition_bytes = {d[7] for d in definitions}
    cursor = ts.QueryCursor(refs_query) if spans else None
    size = len(source)
    kept: dict[str, list] = {}  # name -> [(node, code, dotted)], as extract keeps them
    captured: set[int] = set()
    for name, at, end in spans:
        cursor.set_byte_range(max(0, at - 1), min(size, end + 1))
        strongest = None
        dotted = False
        for capture, nodes in cursor.captures(root).items():
            code = KIND_CODE[capture]
            for found in nodes:
                if found.start_byte != at:
                    continue
                if code == ATTRIBUTE:
                    dotted = True
                if strongest is None or code < strongest[0]:
                    strongest = (code, found)
        if strongest is None:
            continue
        captured.add(at)
        code, found = strongest
        if found.end_byte == end:
            kept.setdefault(name, []).append((found, code, dotted))
    local = provider.local_places({name: [row[0] for row in rows] for name, rows in kept.items()})
    occurrences: dict[str, list[Occurrence]] = {}
    for name, rows in kept.items():
        for found, code, dotted in rows:
            at = found.start_byte
            point = found.start_point
            if at in definition_bytes:
                code = 0
            elif dotted:
                code |= THROUGH
            elif at in local:
                code |= LOCAL
            occurrences.setdefault(name, []).append((at, point.row + 1, point.column + 1, code))
    for d in definitions:
        if d[0] in names and d[7] not in captured:
            occurrences.setdefault(d[0], []).append((d[7], d[3], d[4], 0))
    return (root.has_error, definitions, occurrences, None)


def counts(occurrences: dict[str, list[Occurrence]]) -> dict[str, tuple[int, int]]:
    """Per name, its references (definitions and locals left out): ``(bare, through an
    object)``, what ``relore map`` ranks by, kept beside the record so a map never walks
    occurrences."""
    summary = {}
    for name, found in occurrences.items():
        bare = through = 0
        for occurrence in found:
            code = occurrence[3]
            if code & LOCAL:
                continue
            if code & THROUGH:
                through += 1
            elif code != DEFINITION:
                bare += 1
        if bare or through:
            summary[name] = (bare, through)
    return summary
