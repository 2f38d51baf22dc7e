"""Python: functions, methods (a function directly in a class) and classes."""

from __future__ import annotations

import builtins
import re

from relore.client.code.providers.base import Provider

_BUILTIN_TYPES = (str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float, object)


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
    builtin_names = frozenset(n for n in dir(builtins) if not n.startswith("_"))
    builtin_methods = frozenset(n for t in _BUILTIN_TYPES for n in dir(t) if not n.startswith("_"))
    entry_files = ("__init__.py",)

    def definition_pattern(self, name: str) -> re.Pattern[bytes] | None:
        # `def name`, `async def name`, `class name`: a keyword, then whitespace or a
        # line continuation, then the name
        return re.compile(
            rb"(?:def|class)[\s\\]+" + re.escape(name.encode()) + rb"(?![A-Za-z0-9_])"
        )


PROVIDERS = (PythonProvider(),)
