"""Python: functions, methods (a function directly in a class) and classes."""

from __future__ import annotations

from relore.client.code.providers.base import Provider


class PythonProvider(Provider):
    name = "python"
    extensions = (".py", ".pyi")
    grammar_module = "tree_sitter_python"
    definitions = """
    (function_definition name: (identifier) @name) @definition.function
    (class_definition name: (identifier) @name) @definition.class
    """
    references = """
    (call function: (identifier) @call)
    (call function: (attribute attribute: (identifier) @call))
    (attribute attribute: (identifier) @attribute)
    (identifier) @name
    """


PROVIDERS = (PythonProvider(),)
