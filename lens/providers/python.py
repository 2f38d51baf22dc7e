"""Python: functions, methods (a function directly in a class) and classes; a module's
``__all__`` and ``from … import …`` (what it declares public, for ``relore map``)."""

from __future__ import annotations

import builtins
import re

from relore.lens.providers import python_scopes
from relore.lens.providers.base import MAX_EXPORTS, Provider

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

_BUILTIN_TYPES = (str, bytes, bytearray, list, dict, set, frozenset, tuple, int, float, object)
# module-level blocks an import or ``__all__`` may sit in (``try: from ._x import y``), never
# a function's or a class's; read this many deep
_BLOCKS = frozenset(
    {
        "block",
        "if_statement",
        "elif_clause",
        "else_clause",
        "try_statement",
        "except_clause",
        "finally_clause",
        "with_statement",
    }
)
_NESTING = 4
# what ``__all__`` may be built from: literals, ``+`` and parentheses
_LITERALS = frozenset({"list", "tuple", "parenthesized_expression", "binary_operator"})


def _text(source: bytes, node: Any) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _strings(node: Any, source: bytes) -> tuple[list[str], bool] | None:
    """The identifiers a literal ``__all__`` expression spells, and whether it extends
    ``__all__`` itself (``__all__ + [...]``); None when it is built some other way."""
    found: list[str] = []
    extends = False
    pending = [node]
    while pending:
        node = pending.pop()
        if node.type == "string":
            parts = [c for c in node.children if c.type not in ("string_start", "string_end")]
            if all(c.type == "string_content" for c in parts):
                text = "".join(_text(source, c) for c in parts)
                if text.isidentifier():
                    found.append(text)
        elif node.type == "identifier" and _text(source, node) == "__all__":
            extends = True
        elif node.type in _LITERALS:
            operator = node.child_by_field_name("operator")
            if node.type == "binary_operator" and (operator is None or operator.type != "+"):
                return None
            pending.extend(reversed(node.named_children))
        elif node.type not in ("comment", "concatenated_string"):
            return None
    return found, extends


def _all_statement(node: Any, source: bytes) -> tuple[list[str], bool] | None:
    """``(names, extends)`` for a statement that sets or extends ``__all__`` as literals
    spell it; None for any other statement, and for an ``__all__`` computed from something
    else (which lists nothing readable: ``exports`` then forgets what it had)."""
    if node.type in ("assignment", "augmented_assignment"):
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or _text(source, left) != "__all__":
            return None
        found = _strings(right, source)
        if found is None:  # computed: from itself (``sorted(__all__)``) it keeps its names
            return ([], True) if b"__all__" in source[right.start_byte : right.end_byte] else None
        return found[0], found[1] or node.type == "augmented_assignment"
    if node.type == "call":
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or arguments is None or function.type != "attribute":
            return None
        owner = function.child_by_field_name("object")
        method = function.child_by_field_name("attribute")
        if owner is None or method is None or _text(source, owner) != "__all__":
            return None
        if _text(source, method) not in ("extend", "append"):
            return None
        names: list[str] = []
        for argument in arguments.named_children:
            found = _strings(argument, source)
            if found is not None:
                names.extend(found[0])
        return names, True
    return None


def _sets_all(node: Any, source: bytes) -> bool:
    left = node.child_by_field_name("left") if node.type == "assignment" else None
    return left is not None and _text(source, left) == "__all__"


def _imported(node: Any, source: bytes) -> list[tuple[int, str, str, str]]:
    """``from module import name as alias`` rows (``*``: every public name)."""
    module = node.child_by_field_name("module_name")
    if module is None:
        return []
    level, dotted = 0, _text(source, module)
    if module.type == "relative_import":
        level, dotted = 0, ""
        for child in module.children:
            if child.type == "import_prefix":
                level = _text(source, child).count(".")
            elif child.type == "dotted_name":
                dotted = _text(source, child)
    dotted = "".join(dotted.split())
    if dotted == "__future__":
        return []
    rows = [(level, dotted, "*", "*") for c in node.children if c.type == "wildcard_import"]
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            name_node = child.child_by_field_name("name")
            alias_node = child.child_by_field_name("alias")
            if name_node is None or alias_node is None:
                continue
            name, alias = _text(source, name_node), _text(source, alias_node)
        else:
            name = alias = _text(source, child)
        if name.isidentifier() and alias.isidentifier():
            rows.append((level, dotted, name, alias))
    return rows


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

    def local_places(self, nodes_by_name: dict[str, list]) -> set[int]:
        return python_scopes.local_places(nodes_by_name)

    def exports(self, root: Any, source: bytes) -> tuple[list[str] | None, list[tuple]]:
        """``__all__`` as its literals build it (``=``, ``+=``, ``+``, ``.extend``,
        ``.append``; a computed one lists nothing readable) and every module-level
        ``from … import …``."""
        names: dict[str, None] | None = None
        imports: list[tuple[int, str, str, str]] = []
        pending = [(child, 0) for child in reversed(root.children)]
        while pending:
            node, depth = pending.pop()
            if node.type in _BLOCKS:
                if depth < _NESTING:
                    pending.extend((c, depth + 1) for c in reversed(node.children))
            elif node.type == "import_from_statement":
                imports.extend(_imported(node, source)[: MAX_EXPORTS - len(imports)])
            elif node.type == "expression_statement" and node.named_children:
                statement = node.named_children[0]
                found = _all_statement(statement, source)
                if found is None and _sets_all(statement, source):
                    names = None
                elif found is not None:
                    listed, extends = found
                    if names is None or not extends:
                        names = {}
                    for name in listed[: MAX_EXPORTS - len(names)]:
                        names[name] = None
        return (None if names is None else list(names)), imports

    def module_files(self, importer: str, level: int, module: str) -> tuple[str, ...]:
        """``.mod`` beside the importer, ``..mod`` one package up; an absolute ``pkg.mod``
        inside the nearest enclosing directory named ``pkg`` (the tree's own package)."""
        parts = module.split(".") if module else []
        folders = importer.split("/")[:-1]
        if level:
            if level - 1 > len(folders):
                return ()
            base = folders[: len(folders) - (level - 1)]
        else:
            if not parts or parts[0] not in folders:
                return ()
            base = folders[: len(folders) - 1 - folders[::-1].index(parts[0])]
        path = "/".join(base + parts)
        prefix = path + "/" if path else ""
        if not parts:
            return (f"{prefix}__init__.py", f"{prefix}__init__.pyi")
        return (f"{path}.py", f"{prefix}__init__.py", f"{path}.pyi", f"{prefix}__init__.pyi")


PROVIDERS = (PythonProvider(),)
