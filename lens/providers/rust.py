"""Rust: functions, methods (a function in an ``impl`` or ``trait``), types, traits, macros."""

from __future__ import annotations

import re

from relore.lens.providers import rust_scopes
from relore.lens.providers.base import Provider


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
    (shorthand_field_identifier) @name
    """
    method_containers = frozenset({"scope", "trait"})
    # the prelude's macros and the methods of Option, Result, Vec, String, iterators
    builtin_names = frozenset(
        "assert assert_eq assert_ne dbg eprintln format matches panic print println todo "
        "unimplemented unreachable vec write writeln Some None Ok Err Box Vec String".split()
    )
    builtin_methods = frozenset(
        "and_then as_ref as_mut as_str clone cloned collect contains expect extend filter get "
        "insert into into_iter is_empty is_none is_some iter iter_mut len map map_err ok "
        "ok_or push remove to_owned to_string unwrap unwrap_or unwrap_or_default "
        "unwrap_or_else".split()
    )
    entry_files = ("lib.rs", "main.rs")

    def local_places(self, nodes_by_name: dict[str, list]) -> set[int]:
        return rust_scopes.rust_local_places(nodes_by_name)

    def definition_pattern(self, name: str) -> re.Pattern[bytes] | None:
        # every definition the query finds follows its keyword (`fn`, `struct`, …,
        # `macro_rules!`); `r#name` is another identifier's spelling and is not matched
        keywords = rb"(?:fn|struct|enum|union|trait|type|mod|macro_rules!)"
        return re.compile(keywords + rb"\s+" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])")


PROVIDERS = (RustProvider(),)
