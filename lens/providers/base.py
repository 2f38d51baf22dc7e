"""What a language provider is: a grammar to load, and two queries in tree-sitter's language.

A provider owns everything language-specific (rule: the provider owns its node-type → kind
map; the core groups and counts):

- ``definitions``: patterns capturing a definition node as ``@definition.<kind>`` and its
  name as ``@name``; a block that qualifies the names inside it without defining a name of
  its own (a Rust ``impl``) is captured as ``@scope`` with its ``@name``.
- ``references``: patterns capturing identifier nodes as ``@call``, ``@attribute`` or
  ``@name``. One identifier may match several patterns (a method name in ``g.greet()`` is
  both an attribute and a call); the core keeps one row per name byte span and the
  strongest kind (definition > call > attribute > name).
- ``exports`` and ``module_files``: what a file declares public and where the modules it
  imports from are (``surface.py`` resolves them); a language without such declarations
  returns None and the map reads none.

tree-sitter and the grammar are imported only here, lazily, on first use by a code verb:
``relore search`` and ``relore status`` never load them (invariant 1's runtime half).
"""

from __future__ import annotations

import importlib
import importlib.util
import re

TYPE_CHECKING = False  # typing stays unimported: a cached answer's start counts
if TYPE_CHECKING:
    from typing import Any

# names and imports one file may declare (``exports``): more are dropped, so a hostile
# declaration costs one file's worth of record and of ranking
MAX_EXPORTS = 4096


class GrammarUnavailable(RuntimeError):
    """The grammar (or tree-sitter itself) could not be imported or loaded."""


class Provider:
    name: str = ""
    extensions: tuple[str, ...] = ()
    grammar_module: str = ""
    grammar_function: str = "language"
    definitions: str = ""
    references: str = ""
    # definition kinds whose directly nested functions are methods
    method_containers: frozenset[str] = frozenset({"class"})
    # For ``relore map``, which matches references to definitions by spelling: the
    # language's own functions (a bare ``len(x)`` means the built-in, not a tree's ``len``)
    # and its built-in types' methods (``.append(...)`` means a list's).
    builtin_names: frozenset[str] = frozenset()
    builtin_methods: frozenset[str] = frozenset()
    # the files that declare a package's public surface (the shallowest ones are the map's
    # default vantage point)
    entry_files: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._loaded: tuple[Any, Any, Any, Any] | None = None
        self._failure: str | None = None

    def __repr__(self) -> str:
        return f"<provider {self.name} {self.grammar_module}>"

    def load(self) -> tuple[Any, Any, Any, Any]:
        """(tree_sitter module, parser, definitions query, references query), loaded once."""
        if self._loaded is not None:
            return self._loaded
        if self._failure is not None:
            raise GrammarUnavailable(self._failure)
        try:
            tree_sitter = importlib.import_module("tree_sitter")
            grammar = importlib.import_module(self.grammar_module)
            language = tree_sitter.Language(getattr(grammar, self.grammar_function)())
            parser = tree_sitter.Parser(language)
            defs = tree_sitter.Query(language, self.definitions)
            refs = tree_sitter.Query(language, self.references)
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            self._failure = f"{self.grammar_module}: {exc}"
            raise GrammarUnavailable(self._failure) from None
        self._loaded = (tree_sitter, parser, defs, refs)
        return self._loaded

    def available(self) -> bool:
        try:
            self.load()
        except GrammarUnavailable:
            return False
        return True

    def installed(self) -> bool:
        """tree-sitter and the grammar can be found, without importing either (a cached
        answer never loads them); a grammar that is found but fails to load says so when a
        file needs it (``load`` raises)."""
        if self._loaded is not None:
            return True
        if self._failure is not None:
            return False
        for module in ("tree_sitter", self.grammar_module):
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                self._failure = f"{module}: not installed"
                return False
        return True

    @property
    def failure(self) -> str | None:
        return self._failure

    def definition_pattern(self, name: str) -> re.Pattern[bytes] | None:
        """What a file's bytes must hold to define ``name`` (a superset of what the
        definitions query finds: it may match more, never less), so ``defs`` parses no file
        that cannot define it. None: the language has no such spelling (a JavaScript method
        has no keyword), and every file holding the name is parsed."""
        return None

    def is_private(self, name: str) -> bool:
        """A name the language or its convention keeps inside its module."""
        return name.startswith("_")

    def exports(self, root: Any, source: bytes) -> tuple | None:
        """What the file declares public, as ``(names it lists, or None when it lists none;
        [(level, module, name, alias), ...] it imports)`` (``name`` ``*`` for every public
        name of ``module``; ``level`` the leading dots of a relative import, 0 for an
        absolute one), at most ``MAX_EXPORTS`` of each. None: the language has no such
        declaration."""
        return None

    def module_files(self, importer: str, level: int, module: str) -> tuple[str, ...]:
        """The tree's relative paths that ``module`` (imported from file ``importer`` with
        ``level``) may be, most likely first; empty when it is none of the tree's."""
        return ()

    def local_places(self, nodes_by_name: dict[str, list]) -> set[int]:
        """The start bytes of the identifier nodes (every occurrence of each name, as the
        references query captured them) that are parameters or names bound in their own
        function: no use of any definition. Decided per name, from that name's nodes alone
        (``engine.extract_names`` passes some names'). Default: none (the language's
        locals are not told apart)."""
        return set()

    def qualifier(self, definition_node: Any, source: bytes) -> str | None:
        """A scope that is not an enclosing block (Go's method receiver). Default: none."""
        return None
