"""Go: functions, methods (qualified by their receiver's type) and named types."""

from __future__ import annotations

from relore.lens.providers import go_scopes
from relore.lens.providers.base import Provider

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any


class GoProvider(Provider):
    name = "go"
    extensions = (".go",)
    grammar_module = "tree_sitter_go"
    definitions = """
    (function_declaration name: (identifier) @name) @definition.function
    (method_declaration name: (field_identifier) @name) @definition.method
    (type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
    (type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
    (type_spec
      name: (type_identifier) @name
      type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type)
             (array_type) (pointer_type) (channel_type) (generic_type)]) @definition.type
    (type_alias name: (type_identifier) @name) @definition.type
    (method_elem name: (field_identifier) @name) @definition.method
    """
    references = """
    (call_expression function: (identifier) @call)
    (call_expression function: (selector_expression field: (field_identifier) @call))
    (composite_literal type: (type_identifier) @call)
    (composite_literal type: (qualified_type name: (type_identifier) @call))
    (selector_expression field: (field_identifier) @attribute)
    (identifier) @name
    (field_identifier) @name
    (type_identifier) @name
    """
    method_containers = frozenset({"interface"})
    builtin_names = frozenset(
        "append cap clear close complex copy delete imag len make max min new panic print "
        "println real recover".split()
    )

    def local_places(self, nodes_by_name: dict[str, list]) -> set[int]:
        return go_scopes.go_local_places(nodes_by_name)

    def qualifier(self, definition_node: Any, source: bytes) -> str | None:
        if definition_node.type != "method_declaration":
            return None
        receiver = definition_node.child_by_field_name("receiver")
        if receiver is None:
            return None
        for parameter in receiver.named_children:
            node = parameter.child_by_field_name("type")
            while node is not None and node.type in ("pointer_type", "generic_type"):
                node = node.child_by_field_name("type") or (
                    node.named_children[0] if node.named_children else None
                )
            if node is not None and node.type == "type_identifier":
                return source[node.start_byte : node.end_byte].decode("utf-8", "replace")
        return None


PROVIDERS = (GoProvider(),)
