"""Which of a Go file's identifiers are local (``GoProvider.local_places``; the walk is
``block_scopes``).

- **Parameters**, named **results** and the **receiver** of a function, method or function
  literal (and of a function type or an interface's method), seen in all of it; a generic
  receiver's type arguments (``func (b *Box[T])``) are the method's type parameters.
- **Type parameters** (``[T any]``) in their function or type declaration.
- ``:=`` (a short declaration, a ``range`` clause's, a ``select`` case's receive, a type
  switch's ``v := x.(type)``), and ``var``/``const``/``type`` inside a function body: a
  declaration is seen from its end to its block's (``x := x + 1`` uses the outer ``x``);
  a clause's, in its statement.
- The package's ``var``, ``const``, ``func`` and ``type`` are the map, never local; a
  ``for k = range`` assigns and binds nothing.
"""

from __future__ import annotations

from relore.lens.providers.block_scopes import enclosing, is_field, local_places, whole

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

VARIABLES = frozenset({"identifier", "type_identifier"})
BLOCKS = frozenset(
    {
        "block",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "expression_case",
        "type_case",
        "default_case",
        "communication_case",
        "func_literal",
        "function_declaration",
        "method_declaration",
        "source_file",
    }
)
_SPECS = frozenset({"var_spec", "const_spec", "type_spec", "type_alias"})
_TELLING = frozenset(
    {
        *_SPECS,
        "parameter_declaration",
        "variadic_parameter_declaration",
        "type_parameter_declaration",
        "expression_list",
        "type_elem",
        "type_arguments",
    }
)


def _rest_of_block(declaration: Any) -> tuple[int, int] | None:
    """From ``declaration``'s end to its block's, unless that block is the package's."""
    block = enclosing(declaration, BLOCKS)
    if block is None or block.type == "source_file":
        return None
    return (declaration.end_byte, block.end_byte)


def _declares(clause: Any) -> bool:
    """Whether a ``range`` clause or a receive declares (``:=``) rather than assigns."""
    return any(child.type == ":=" for child in clause.children)


def _receiver_type_argument(node: Any) -> tuple[int, int] | None:
    """A type argument of a method's generic receiver: one of the method's type
    parameters, seen in the method."""
    current = node.parent
    while current is not None and current.type in ("type_elem", "type_arguments"):
        current = current.parent
    while current is not None and current.type in ("generic_type", "pointer_type"):
        current = current.parent
    if current is None or current.type != "parameter_declaration":
        return None
    parameters = current.parent
    method = parameters.parent if parameters is not None else None
    if method is None or method.type != "method_declaration":
        return None
    return whole(method) if is_field(method, parameters, "receiver") else None


def binding(node: Any) -> tuple[int, int] | None:
    """Where the local ``node`` binds is seen; None when it binds none (a use, or a
    package-level declaration)."""
    parent = node.parent
    if parent is None or parent.type not in _TELLING:
        return None
    kind = parent.type
    if kind in ("parameter_declaration", "variadic_parameter_declaration"):
        if not is_field(parent, node, "name"):
            return None
        function = parent.parent.parent if parent.parent is not None else None
        return whole(function) if function is not None else None
    if kind == "type_parameter_declaration":
        above = parent.parent  # type_parameter_list, on its declaration
        if above is None or above.parent is None or not is_field(parent, node, "name"):
            return None
        return whole(above.parent)
    if kind in ("type_elem", "type_arguments"):
        return _receiver_type_argument(node) if node.type == "type_identifier" else None
    if kind in _SPECS:
        return _rest_of_block(parent) if is_field(parent, node, "name") else None
    # expression_list: the left of a ``:=``, a range clause, a receive; a type switch's alias
    clause = parent.parent
    if clause is None:
        return None
    if not is_field(clause, parent, "alias" if clause.type == "type_switch_statement" else "left"):
        return None
    if clause.type == "short_var_declaration":
        return _rest_of_block(clause)
    if clause.type == "range_clause":
        loop = clause.parent
        return whole(loop) if loop is not None and _declares(clause) else None
    if clause.type == "receive_statement":
        case = enclosing(clause, ("communication_case",))
        return whole(case) if case is not None and _declares(clause) else None
    if clause.type == "type_switch_statement":
        return whole(clause)
    return None


def go_local_places(nodes_by_name: dict[str, list]) -> set[int]:
    return local_places(nodes_by_name, binding, VARIABLES)
