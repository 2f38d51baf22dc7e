"""JavaScript (and JSX): functions, arrow functions bound to a name, classes, methods."""

from __future__ import annotations

from relore.client.code.providers.base import Provider

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
"""


class JavaScriptProvider(Provider):
    name = "javascript"
    extensions = (".js", ".mjs", ".cjs", ".jsx")
    grammar_module = "tree_sitter_javascript"
    definitions = DEFINITIONS
    references = REFERENCES


PROVIDERS = (JavaScriptProvider(),)
