"""Rust: functions, methods (a function in an ``impl`` or ``trait``), types, traits, macros."""

from __future__ import annotations

from relore.client.code.providers.base import Provider


class RustProvider(Provider):
    name = "rust"
    extensions = (".rs",)
    grammar_module = "tree_sitter_rust"
    definitions = """
    (function_item name: (identifier) @name) @definition.function
    (function_signature_item name: (identifier) @name) @definition.function
    (struct_item name: (type_identifier) @name) @definition.struct
    (enum_item name: (type_identifier) @name) @definition.enum
    (union_item name: (type_identifier) @name) @definition.union
    (trait_item name: (type_identifier) @name) @definition.trait
    (type_item name: (type_identifier) @name) @definition.type
    (mod_item name: (identifier) @name) @definition.module
    (macro_definition name: (identifier) @name) @definition.macro
    (impl_item type: [(type_identifier) @name
                      (generic_type type: (type_identifier) @name)
                      (scoped_type_identifier name: (type_identifier) @name)]) @scope
    """
    references = """
    (call_expression function: (identifier) @call)
    (call_expression function: (field_expression field: (field_identifier) @call))
    (call_expression function: (scoped_identifier name: (identifier) @call))
    (call_expression function: (generic_function function: (identifier) @call))
    (call_expression
      function: (generic_function function: (field_expression field: (field_identifier) @call)))
    (call_expression
      function: (generic_function function: (scoped_identifier name: (identifier) @call)))
    (macro_invocation macro: (identifier) @call)
    (struct_expression name: (type_identifier) @call)
    (field_expression field: (field_identifier) @attribute)
    (scoped_identifier name: (identifier) @attribute)
    (identifier) @name
    (field_identifier) @name
    (type_identifier) @name
    """
    method_containers = frozenset({"scope", "trait"})


PROVIDERS = (RustProvider(),)
