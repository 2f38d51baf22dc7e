"""Which of a Rust file's identifiers are local (``RustProvider.local_places``; the walk is
``block_scopes``).

- **Patterns** bind: a function's or a closure's parameters (seen in all of it), a ``let``
  (from its end to its block's: ``let x = x + 1`` uses the outer ``x``), an ``if let`` or
  ``while let`` (in that expression), a ``for`` (in the loop), a ``match`` arm (in the arm),
  however nested (``(a, mut b)``, ``Some(ref x)``, ``Point { x, y: yy }``, ``n @ 1..=3``).
  A pattern's path (``Some``, ``E::V``) binds nothing, nor does a capitalised bare name
  (``MAX =>``): by convention a constant, a unit struct or a variant, which a pattern
  matches and never binds.
- **Generic parameters** (``<T>``, ``const N``) in the item they belong to.
- An **item** inside a function's block (a nested ``fn``, ``struct``, ``const``…) is that
  block's. Items at module level are the map, never local; a ``use`` names another module's
  definition and binds no local.
"""

from __future__ import annotations

from relore.lens.providers.block_scopes import enclosing, is_field, local_places, whole

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

VARIABLES = frozenset({"identifier", "type_identifier", "shorthand_field_identifier"})
# a node a pattern's name may be nested in, and its field that binds nothing (None: none)
_PATTERNS = {
    "tuple_pattern": None,
    "tuple_struct_pattern": "type",
    "struct_pattern": "type",
    "field_pattern": None,
    "ref_pattern": None,
    "mut_pattern": None,
    "reference_pattern": None,
    "captured_pattern": None,
    "slice_pattern": None,
    "or_pattern": None,
    "match_pattern": "condition",  # a guard is evaluated, not matched
}
_GENERICS = {
    "type_parameter": "name",
    "constrained_type_parameter": "left",  # older grammars
    "optional_type_parameter": "name",
    "const_parameter": "name",
}
_ITEMS = frozenset(
    {
        "function_item",
        "struct_item",
        "enum_item",
        "union_item",
        "trait_item",
        "type_item",
        "const_item",
        "static_item",
        "mod_item",
        "macro_definition",
    }
)
_BOUND = frozenset(
    {"parameter", "closure_parameters", "let_declaration", "let_condition", "for_expression"}
)
_TELLING = frozenset({*_PATTERNS, *_BOUND, *_GENERICS, *_ITEMS, "match_arm"})
_CONDITIONS = frozenset({"if_expression", "while_expression", "match_arm"})


def _pattern_binding(node: Any) -> tuple[int, int] | None:
    """Where a name a pattern binds is seen; None when the name is no pattern's binding."""
    child, parent = node, node.parent
    while parent is not None and parent.type in _PATTERNS:
        excluded = _PATTERNS[parent.type]
        if excluded is not None and is_field(parent, child, excluded):
            return None
        child, parent = parent, parent.parent
    if parent is None or (parent.type not in _BOUND and parent.type != "match_arm"):
        return None
    kind = parent.type
    if kind == "closure_parameters":
        span = whole(parent.parent) if parent.parent is not None else None
    elif not is_field(parent, child, "pattern"):
        return None
    elif kind == "parameter":
        function = parent.parent.parent if parent.parent is not None else None
        span = whole(function) if function is not None else None
    elif kind == "let_declaration":
        block = parent.parent
        span = (parent.end_byte, block.end_byte) if block is not None else None
    elif kind == "let_condition":
        around = enclosing(parent, _CONDITIONS)
        span = whole(around) if around is not None else None
    else:  # for_expression, match_arm
        span = whole(parent)
    if span is not None and node.type == "identifier" and node.text[:1].isupper():
        return None  # ``MAX =>``: a constant or a variant, matched, not bound
    return span


def binding(node: Any) -> tuple[int, int] | None:
    """Where the local ``node`` binds is seen; None when it binds none (a use, or a
    module's item)."""
    parent = node.parent
    if parent is None or parent.type not in _TELLING:
        return None
    kind = parent.type
    if kind in _GENERICS:
        above = parent.parent  # type_parameters, on its item
        if above is None or above.parent is None or not is_field(parent, node, _GENERICS[kind]):
            return None
        return whole(above.parent)
    if kind in _ITEMS:
        block = parent.parent
        if block is None or block.type != "block" or not is_field(parent, node, "name"):
            return None
        return whole(block)
    return _pattern_binding(node)


def rust_local_places(nodes_by_name: dict[str, list]) -> set[int]:
    return local_places(nodes_by_name, binding, VARIABLES)
