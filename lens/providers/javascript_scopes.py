"""Which of a JavaScript or TypeScript file's identifiers are local
(``JavaScriptProvider.local_places``, TypeScript's too; the walk is ``block_scopes``).

- **Parameters** of a function, arrow function, method, or a TypeScript signature or
  function type, however nested in a pattern (``{ a, b: [c], d = 1 }``, ``...rest``): seen
  in the whole function (its defaults included). A default's value is a use.
- **Declarations** in a function or a block: ``let``/``const``, a ``class`` or ``function``
  declaration (and TypeScript's ``interface``/``type``/``enum``), in their block; ``var``
  in its function. At module level they are the module's: the map, never local.
- A declaration whose value is another module's (``const { f } = require("m")``, ``await
  import("m")``) imports, in a function or not: never local.
- ``catch`` parameters; ``for (const x of …)``/``for (let k in …)`` bindings (``for (x of
  …)`` assigns, and binds nothing).
- TypeScript type parameters (``<T>``) in the declaration they belong to, and a mapped
  type's key (``[K in keyof T]``).
- A class's fields and an object's keys are property names, never local.
"""

from __future__ import annotations

from relore.lens.providers.block_scopes import enclosing, is_field, local_places, whole

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

# what can name a variable (a use or a binding); a property's name cannot
VARIABLES = frozenset(
    {
        "identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "type_identifier",
    }
)
FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",  # older grammars' function expression
        "generator_function",
        "arrow_function",
        "method_definition",
        "class_static_block",
        "program",
    }
)
BLOCKS = FUNCTIONS | {
    "statement_block",
    "for_statement",
    "for_in_statement",
    "switch_body",
}
# a node a binding's name may be nested in, and the field it must be in (None: any)
_PATTERNS = {
    "array_pattern": None,
    "object_pattern": None,
    "rest_pattern": None,
    "pair_pattern": "value",
    "assignment_pattern": "left",
    "object_assignment_pattern": "left",
    "required_parameter": "pattern",
    "optional_parameter": "pattern",
}
_DECLARED = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
    }
)
# what an import's value may be wrapped in (``await``, ``( )``, ``.f``)
_UNWRAP = frozenset({"await_expression", "parenthesized_expression", "member_expression"})
# the parents under which an identifier may bind
_TELLING = frozenset(
    {
        *_PATTERNS,
        *_DECLARED,
        "formal_parameters",
        "arrow_function",
        "variable_declarator",
        "catch_clause",
        "for_in_statement",
        "type_parameter",
        "mapped_type_clause",
    }
)


def _in_block(node: Any) -> tuple[int, int] | None:
    """The block ``node`` is declared in, unless that is the module."""
    block = enclosing(node, BLOCKS)
    return None if block is None or block.type == "program" else whole(block)


def _in_function(node: Any) -> tuple[int, int] | None:
    function = enclosing(node, FUNCTIONS)
    return None if function is None or function.type == "program" else whole(function)


def _imports(value: Any) -> bool:
    """Whether a declaration's value is another module's: ``require("m")``, ``await
    import("m")``, or a property of one (``require("m").f``)."""
    while value is not None and value.type in _UNWRAP:
        value = value.child_by_field_name("object") or value.named_child(0)
    if value is None or value.type != "call_expression":
        return False
    function = value.child_by_field_name("function")
    if function is None:
        return False
    return function.type == "import" or (
        function.type == "identifier" and function.text == b"require"
    )


def binding(node: Any) -> tuple[int, int] | None:
    """Where the local ``node`` binds is seen; None when it binds none (a use, or a
    module's declaration)."""
    parent = node.parent
    if parent is None or parent.type not in _TELLING:
        return None
    child = node
    while parent is not None and parent.type in _PATTERNS:
        field = _PATTERNS[parent.type]
        if field is not None and not is_field(parent, child, field):
            return None  # a default's value, a key
        child, parent = parent, parent.parent
    if parent is None:
        return None
    kind = parent.type
    if kind == "formal_parameters":
        return whole(parent.parent) if parent.parent is not None else None
    if kind == "arrow_function":
        return whole(parent) if is_field(parent, child, "parameter") else None
    if kind == "variable_declarator":
        if not is_field(parent, child, "name") or parent.parent is None:
            return None
        if _imports(parent.child_by_field_name("value")):
            return None  # another module's definition, however lazily required
        declaration = parent.parent
        if declaration.type == "variable_declaration":  # var
            return _in_function(declaration)
        return _in_block(declaration)
    if kind == "catch_clause":
        return whole(parent) if is_field(parent, child, "parameter") else None
    if kind == "for_in_statement":
        declared = parent.child_by_field_name("kind")
        if declared is None or not is_field(parent, child, "left"):
            return None  # ``for (x of xs)`` assigns an x declared elsewhere
        return _in_function(parent) if declared.type == "var" else whole(parent)
    if kind in _DECLARED:
        return _in_block(parent) if is_field(parent, child, "name") else None
    if kind == "type_parameter":
        above = parent.parent  # type_parameters, on its declaration
        if above is None or above.parent is None or not is_field(parent, child, "name"):
            return None
        return whole(above.parent)
    if kind == "mapped_type_clause":
        above = parent.parent
        return whole(above) if above is not None and is_field(parent, child, "name") else None
    return None


def javascript_local_places(nodes_by_name: dict[str, list]) -> set[int]:
    return local_places(nodes_by_name, binding, VARIABLES)
