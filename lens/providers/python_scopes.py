"""Which of a Python file's identifiers are local: a parameter, or a name its function,
lambda or comprehension binds (``PythonProvider.local_places``).

``relore map`` matches references to definitions by spelling, so a parameter ``params`` or
a comprehension's ``r`` in one file read as uses of a function ``params`` or ``r`` another
file defines. A local names nothing outside its scope: it is no use of any definition.

Python's own rules, read off the tree, one name at a time (what one name's occurrences
alone decide, so ``engine.extract_names`` finds the same as ``engine.extract``):

- **Scopes**: the module, a class body, a function or lambda, a comprehension. A
  function's defaults and annotations, a class's bases and a comprehension's first
  iterable are evaluated in the scope around it; a class body's names are not seen from
  the functions inside it.
- **Bindings**: parameters, assignment and augmented assignment targets (unpacking
  included), ``for`` targets, ``with … as`` and ``except … as``, ``del``, a ``match``
  capture, a nested ``def``/``class``; a walrus binds in the nearest scope that is not a
  comprehension. A name ``global`` declares binds in the module; ``nonlocal``, in the
  function around.
- **Imports** name another module's definition: an imported name is never local, in a
  function or not (``def f(): from .x import helper``).
- **Local**: an occurrence that resolves to a binding of its function, lambda or
  comprehension; and a keyword (``f(text=…)``, ``case P(x=…)``), which names the callee's
  parameter or attribute, never a definition.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

MODULE, CLASS, FUNCTION, COMPREHENSION = range(4)
_SCOPES = {
    "module": MODULE,
    "class_definition": CLASS,
    "function_definition": FUNCTION,
    "lambda": FUNCTION,
    "list_comprehension": COMPREHENSION,
    "set_comprehension": COMPREHENSION,
    "dictionary_comprehension": COMPREHENSION,
    "generator_expression": COMPREHENSION,
}
# what an assignment's or a loop's target may nest its names in
_TARGETS = frozenset(
    {
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "list_splat_pattern",
        "tuple",
        "list",
        "parenthesized_expression",
    }
)
_PARAMETERS = frozenset({"parameters", "lambda_parameters"})
_PARAMETER_PARTS = frozenset({"default_parameter", "typed_default_parameter"})
_SPLATS = frozenset({"list_splat_pattern", "dictionary_splat_pattern"})
_SPLATTED = _PARAMETERS | {"typed_parameter"}  # where a splat is a parameter
# an occurrence's role (``_role``)
REF, BIND, PARAM, WALRUS, IMPORT, GLOBAL, NONLOCAL, KEYWORD, DEF, OTHER = range(10)
_DECLARED = frozenset({GLOBAL, NONLOCAL, IMPORT})
# the parents under which an identifier may be anything but a plain use
_TELLING = frozenset(
    {
        *_TARGETS,
        *_PARAMETERS,
        *_PARAMETER_PARTS,
        *_SPLATS,
        "attribute",
        "keyword_argument",
        "keyword_pattern",
        "typed_parameter",
        "global_statement",
        "nonlocal_statement",
        "function_definition",
        "class_definition",
        "aliased_import",
        "dotted_name",
        "splat_pattern",
        "delete_statement",
        "as_pattern",
        "as_pattern_target",
        "assignment",
        "augmented_assignment",
        "for_statement",
        "for_in_clause",
        "named_expression",
    }
)


def _role(node: Any) -> int:
    """What the identifier ``node`` does where it stands."""
    parent = node.parent
    kind = parent.type if parent is not None else ""
    if kind not in _TELLING:
        return REF
    if kind == "attribute":
        return OTHER if parent.child_by_field_name("attribute") == node else REF
    if kind in ("keyword_argument", "keyword_pattern"):
        return KEYWORD if parent.named_children[0] == node else REF
    if kind in _PARAMETERS:
        return PARAM
    if kind in _PARAMETER_PARTS:
        return PARAM if parent.child_by_field_name("name") == node else REF
    if kind == "typed_parameter":
        return REF if parent.child_by_field_name("type") == node else PARAM
    above = parent.parent
    if kind in _SPLATS and above is not None and above.type in _SPLATTED:
        return PARAM
    if kind == "global_statement":
        return GLOBAL
    if kind == "nonlocal_statement":
        return NONLOCAL
    if kind in ("function_definition", "class_definition"):
        return DEF if parent.child_by_field_name("name") == node else REF
    if kind == "aliased_import":
        return IMPORT if parent.child_by_field_name("alias") == node else OTHER
    if kind == "dotted_name":
        return _dotted(node, parent)
    if kind in ("splat_pattern", "delete_statement"):
        return BIND
    if kind == "as_pattern" and parent.named_children[0] != node:
        return BIND  # ``case … as name``
    return _target(node)


def _dotted(node: Any, dotted: Any) -> int:
    """An identifier of a dotted name: an import's (the first of ``import a.b`` and a
    ``from`` import's name bind; a module path binds nothing) or a ``case``'s capture."""
    above = dotted.parent
    kind = above.type if above is not None else ""
    first = dotted.named_children[0] == node
    if kind == "import_statement":
        return IMPORT if first else OTHER
    if kind == "import_from_statement":
        is_module = above.child_by_field_name("module_name") == dotted
        return IMPORT if first and not is_module else OTHER
    if kind == "case_pattern" and dotted.named_child_count == 1:
        return BIND
    return (
        OTHER if kind in ("aliased_import", "relative_import", "future_import_statement") else REF
    )


def _target(node: Any) -> int:
    """BIND (WALRUS) when ``node`` is, or is nested in, what a statement assigns to."""
    child = node
    parent = node.parent
    while parent is not None and parent.type in _TARGETS:
        child, parent = parent, parent.parent
    if parent is None:
        return REF
    kind = parent.type
    if kind in ("assignment", "augmented_assignment", "for_statement", "for_in_clause"):
        return BIND if parent.child_by_field_name("left") == child else REF
    if kind == "as_pattern_target":
        return BIND
    if kind == "named_expression":
        return WALRUS if parent.child_by_field_name("name") == child else REF
    if kind == "delete_statement":
        return BIND
    return REF


class Scopes:
    """Each occurrence's chain of scopes, innermost first: ``((node id, kind, start byte,
    end byte), ...)``. Memoised per node walked through (what a node two or more below
    its scope holds shares that node's chain) and per scope."""

    def __init__(self) -> None:
        self._below: dict[int, tuple] = {}
        self._outer: dict[int, tuple] = {}

    def chain(self, node: Any, parameter: bool = False) -> tuple:
        walked = []
        before = came = None  # the two nodes walked through last
        current = node
        found: tuple = ()
        while current is not None:
            key = current.id
            scope = _SCOPES.get(current.type)
            if scope is None and not parameter:
                hit = self._below.get(key)
                if hit is not None:
                    found = hit
                    walked.append(None)  # every node walked is two or more below
                    break
            elif scope is not None and _inside(current, scope, came, before, parameter):
                found = (_entry(current, scope), *self._around(current))
                break
            walked.append(None if scope is not None else key)  # a scope: never memoised
            before, came, current = came, current, current.parent
        if not parameter:  # the one just below the scope decided with what was under it
            for key in walked[:-1]:
                if key is not None:
                    self._below[key] = found
        return found

    def _around(self, scope: Any) -> tuple:
        hit = self._outer.get(scope.id)
        if hit is None:
            hit = self._outer[scope.id] = self.chain(scope) if scope.type != "module" else ()
        return hit


def _entry(scope: Any, kind: int) -> tuple:
    """A chain's scope: ``(id, kind, start, end, hole start, hole end)``, where the bytes
    from start to end but the hole are evaluated in it (a function's or a class's body, a
    lambda's; a comprehension but its first iterable)."""
    start, end = scope.start_byte, scope.end_byte
    hole = (0, 0)
    if kind in (FUNCTION, CLASS):
        body = scope.child_by_field_name("body")
        if body is not None:
            start, end = body.start_byte, body.end_byte
    elif kind == COMPREHENSION:
        first = next((c for c in scope.named_children if c.type == "for_in_clause"), None)
        iterable = first.child_by_field_name("right") if first is not None else None
        if iterable is not None:
            hole = (iterable.start_byte, iterable.end_byte)
    return (scope.id, kind, start, end, *hole)


def _inside(scope: Any, kind: int, came: Any, before: Any, parameter: bool) -> bool:
    """Whether what was reached through ``came`` (and ``before`` under it) is evaluated in
    ``scope``, not in the scope around it."""
    if kind == MODULE:
        return True
    if came is None:
        return False
    if kind == CLASS:
        return came.type == "block"  # not its name, bases or type parameters
    if kind == FUNCTION:
        if came.type in _PARAMETERS:
            return parameter  # a default or an annotation: the scope around
        return came.type == "block" or scope.type == "lambda"
    if came.type == "for_in_clause" and before is not None:
        first = next(c for c in scope.named_children if c.type == "for_in_clause")
        if first == came and came.child_by_field_name("right") == before:
            return False  # the first iterable: the scope around
    return True


def _local(chain: tuple, bound: dict[int, set[int]]) -> bool:
    """Whether a name used in ``chain`` resolves to its function's, lambda's or
    comprehension's own binding (an import, a ``global``, a class body's or the module's
    binding are not; a ``nonlocal`` looks further out)."""
    for depth, (scope, kind, *_bytes) in enumerate(chain):
        if kind == CLASS and depth:
            continue  # a class body's names are not seen from inside its functions
        roles = bound.get(scope)
        if not roles:
            continue
        if GLOBAL in roles or IMPORT in roles:
            return False
        if NONLOCAL in roles:
            continue
        return kind in (FUNCTION, COMPREHENSION)
    return False


def local_places(nodes_by_name: dict[str, list]) -> set[int]:
    """The start bytes of the occurrences (each name's identifier nodes) that are local.

    Each binding's scope is read off the tree; a plain use is placed by its bytes among
    the scopes binding its name (the innermost whose own bytes hold it decides), and walks
    the tree only where a class body or a ``global``/``nonlocal`` binds the name too."""
    scopes = Scopes()
    local: set[int] = set()
    for nodes in nodes_by_name.values():
        uses = []
        binds = []
        bound: dict[int, set[int]] = {}
        binders: dict[int, tuple] = {}  # scope id -> (depth, its chain entry)
        for node in nodes:
            role = _role(node)
            if role == REF:
                uses.append(node)
            elif role == KEYWORD:
                local.add(node.start_byte)
            elif role != OTHER:
                chain = scopes.chain(node, role == PARAM)
                if role == WALRUS:
                    chain = tuple(s for s in chain if s[1] != COMPREHENSION)
                if not chain:
                    continue
                bound.setdefault(chain[0][0], set()).add(role)
                binders[chain[0][0]] = (len(chain), chain[0])
                if role in (BIND, PARAM, WALRUS, NONLOCAL):
                    binds.append((node, chain[1:] if role == NONLOCAL else chain))
        for node, chain in binds:  # once every binding is known
            if _local(chain, bound):
                local.add(node.start_byte)
        if all(entry[1] == MODULE for _depth, entry in binders.values()):
            continue  # bound at module level or nowhere: no use is local
        walk = any(
            entry[1] == CLASS or roles & {GLOBAL, NONLOCAL}
            for (_depth, entry), roles in zip(binders.values(), bound.values(), strict=True)
        )
        for node in uses:
            if walk:
                found = _local(scopes.chain(node), bound)
            else:
                found = _innermost(node.start_byte, binders.values(), bound)
            if found:
                local.add(node.start_byte)
    return local


def _innermost(at: int, binders, bound: dict[int, set[int]]) -> bool:
    """Whether the innermost scope binding the name whose own bytes hold ``at`` is a
    function, lambda or comprehension that binds it by more than an import."""
    best = None
    for depth, entry in binders:
        _id, _kind, start, end, hole_start, hole_end = entry
        inside = start <= at < end and not hole_start <= at < hole_end
        if inside and (best is None or depth > best[0]):
            best = (depth, entry)
    if best is None:
        return False
    _id, kind = best[1][:2]
    return kind in (FUNCTION, COMPREHENSION) and IMPORT not in bound[_id]
