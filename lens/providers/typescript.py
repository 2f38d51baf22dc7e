"""TypeScript and TSX: JavaScript's definitions plus interfaces, type aliases, enums."""

from __future__ import annotations

from relore.lens.providers import javascript_scopes
from relore.lens.providers.base import Provider
from relore.lens.providers.javascript import (
    BUILTIN_METHODS,
    BUILTIN_NAMES,
    DEFINITIONS,
    REFERENCES,
)

TS_DEFINITIONS = (
    DEFINITIONS
    + """
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(abstract_method_signature name: (property_identifier) @name) @definition.method
(function_signature name: (identifier) @name) @definition.function
"""
)

TS_REFERENCES = (
    REFERENCES
    + """
(type_identifier) @name
"""
)


class TypeScriptProvider(Provider):
    name = "typescript"
    extensions = (".ts", ".mts", ".cts")
    grammar_module = "tree_sitter_typescript"
    grammar_function = "language_typescript"
    definitions = TS_DEFINITIONS
    references = TS_REFERENCES
    builtin_names = BUILTIN_NAMES
    builtin_methods = BUILTIN_METHODS
    entry_files = ("index.ts", "index.mts", "index.cts")

    def local_places(self, nodes_by_name: dict[str, list]) -> set[int]:
        return javascript_scopes.javascript_local_places(nodes_by_name)


class TsxProvider(TypeScriptProvider):
    name = "tsx"
    extensions = (".tsx",)
    grammar_function = "language_tsx"
    entry_files = ("index.tsx",)


PROVIDERS = (TypeScriptProvider(), TsxProvider())
