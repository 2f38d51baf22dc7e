"""JavaScript (and JSX): functions, arrow functions bound to a name, classes, methods."""

from __future__ import annotations

from relore.lens.providers import javascript_scopes
from relore.lens.providers.base import Provider

# Shared with TypeScript, whose grammar extends this one's node types.
DEFINITIONS = """
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (property_identifier) @name) @definition.method
"""

REFERENCES = """
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (property_identifier) @call))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (property_identifier) @call))
(member_expression property: (property_identifier) @attribute)
(identifier) @name
(property_identifier) @name
(shorthand_property_identifier) @name
(shorthand_property_identifier_pattern) @name
"""


# The globals and the built-in prototypes' methods (Array, String, Object, Map, Set, Promise)
BUILTIN_NAMES = frozenset(
    "Array Boolean Date Error JSON Map Math Number Object Promise Proxy Reflect RegExp Set "
    "String Symbol WeakMap WeakSet console decodeURIComponent encodeURIComponent isNaN "
    "parseFloat parseInt require setInterval setTimeout clearInterval clearTimeout".split()
)
BUILTIN_METHODS = frozenset(
    "add apply bind call catch charAt clear concat delete endsWith entries every fill filter "
    "finally find findIndex flat flatMap forEach get has hasOwnProperty includes indexOf join "
    "keys lastIndexOf log map match pop push reduce replace reverse set shift slice some sort "
    "splice split startsWith then toLowerCase toString toUpperCase trim unshift values warn "
    "error".split()
)


class JavaScriptProvider(Provider):
    name = "javascript"
    extensions = (".js", ".mjs", ".cjs", ".jsx")
    grammar_module = "tree_sitter_javascript"
    definitions = DEFINITIONS
    references = REFERENCES
    builtin_names = BUILTIN_NAMES
    builtin_methods = BUILTIN_METHODS
    entry_files = ("index.js", "index.mjs", "index.cjs", "index.jsx")

    def local_places(self, nodes_by_name: dict[str, list]) -> set[int]:
        return javascript_scopes.javascript_local_places(nodes_by_name)


PROVIDERS = (JavaScriptProvider(),)
