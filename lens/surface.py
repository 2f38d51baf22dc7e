"""What a package declares public, read from its own text: the names ``relore map`` credits
to the users a tree does not hold.

A reference graph sees only what the package uses of itself; what only its users call
(``httpx.get``, ``click.group``) it cannot see. The package says it instead:

- **a package's entry file** (``__init__.py``) exports its ``__all__``, or, without one,
  every public name it defines or imports from the tree (``from .x import Name``,
  ``from .x import Name as Name``, ``from .x import *``);
- **a public module** (its name has no leading ``_``) beside an entry file exports its
  ``__all__``: users import from ``pkg.module``. A private module's ``__all__`` only says
  what ``from ._x import *`` brings in.

A star import brings in the imported module's ``__all__``, else its public definitions and
imports, followed through further star imports (each module resolved once; a cycle ends
where it started). ``Name as Other`` is followed to ``Name``: the map ranks definitions by
their own spelling. Names nothing in the tree defines are dropped, so a list of a thousand
made-up names costs nothing.

Each declaration is carried by its package's entry file (``rank.py`` turns it into that
file's edges, one declaration worth one file's references at most): a tree with no entry
file, or a language whose provider declares nothing, ranks as it did.
"""

from __future__ import annotations

from relore.lens.providers.base import MAX_EXPORTS

# names added across every module's resolution, at most: a tree of star imports in a
# thousand-module cycle stops expanding here instead of growing with modules × names
MAX_RESOLVED = 64 * MAX_EXPORTS
# ``Name as Other`` followed through at most this many modules, star imports this deep
MAX_ALIAS_HOPS = 8
MAX_STAR_DEPTH = 32


class _Modules:
    """The tree's declaring files, each read (and its public names resolved) on first use:
    most modules of a large tree are never asked about."""

    def __init__(self, records, providers: dict, defined: set[str]):
        self.defined = defined
        self.provider: dict[str, object] = {}
        self.record: dict[str, object] = {}
        self.listed: dict[str, list[str] | None] = {}
        self.read: dict[str, tuple[list[str], dict[str, tuple[str, str]], list[str]]] = {}
        self.public_names: dict[str, list[str]] = {}
        self.visiting: set[str] = set()
        self.budget = MAX_RESOLVED
        for rel, language, record in records:
            exports = getattr(record, "exports", None)
            if exports is not None and language in providers:
                self.provider[rel] = providers[language]
                self.record[rel] = record
                self.listed[rel] = exports[0]

    def _module(self, rel: str) -> tuple[list[str], dict[str, tuple[str, str]], list[str]]:
        """``rel``'s public definitions, its in-tree imports (alias -> (module, name)) and the
        modules it star-imports."""
        if rel in self.read:
            return self.read[rel]
        provider, record = self.provider[rel], self.record[rel]
        own = [
            d[0]
            for d in record.definitions
            if d[2] == d[0] and d[1] != "method" and not provider.is_private(d[0])
        ]
        aliases: dict[str, tuple[str, str]] = {}
        stars: list[str] = []
        for level, module, name, alias in record.exports[1]:
            found = next(
                (f for f in provider.module_files(rel, level, module) if f in self.provider),
                None,
            )
            if found is None:
                continue
            if name == "*":
                stars.append(found)
            else:
                aliases[alias] = (found, name)
        self.read[rel] = (own, aliases, stars)
        return self.read[rel]

    def origin(self, rel: str, name: str) -> str:
        """The spelling ``name`` is defined with, following ``import X as name``."""
        for _hop in range(MAX_ALIAS_HOPS):
            found = self._module(rel)[1].get(name)
            if found is None:
                break
            rel, name = found
        return name

    def _kept(self, names, into: dict[str, None]) -> None:
        for name in names:
            if self.budget <= 0 or len(into) >= MAX_EXPORTS:
                return
            if name in self.defined and name not in into:
                into[name] = None
                self.budget -= 1

    def public(self, rel: str, depth: int = 0) -> list[str]:
        """The names ``from rel import *`` brings in, by their defined spelling."""
        if rel in self.public_names:
            return self.public_names[rel]
        if rel in self.visiting or depth > MAX_STAR_DEPTH:
            return []  # a cycle: the module already being resolved gives nothing again
        self.visiting.add(rel)
        found: dict[str, None] = {}
        listed = self.listed[rel]
        if listed is not None:
            self._kept((self.origin(rel, n) for n in listed), found)
        else:
            own, aliases, stars = self._module(rel)
            is_private = self.provider[rel].is_private
            self._kept(own, found)
            self._kept((self.origin(rel, a) for a in aliases if not is_private(a)), found)
            for star in stars:
                self._kept(self.public(star, depth + 1), found)
        self.visiting.discard(rel)
        self.public_names[rel] = list(found)
        return self.public_names[rel]


def _folder(rel: str) -> str:
    return rel.rpartition("/")[0]


def _name(rel: str) -> str:
    return rel.rpartition("/")[2]


def declarations(records, providers: dict, defined: set[str]) -> list[tuple[str, str, list[str]]]:
    """``(carrying entry file, declaring file, names)`` for every declaration in the tree.

    ``records`` are ``(relative path, language, record)`` as ``tree_scan.scan`` returns them,
    ``providers`` by language name; ``defined`` holds the names the tree defines (others are
    dropped). Entry files come first, then public modules, each in path order."""
    modules = _Modules(records, providers, defined)
    entries = {
        _folder(rel): rel
        for rel, provider in modules.provider.items()
        if _name(rel) in provider.entry_files
    }
    found = []
    for rel in sorted(entries.values()):
        names = modules.public(rel)
        if names:
            found.append((rel, rel, names))
    for rel in sorted(modules.provider):
        provider = modules.provider[rel]
        carrier = entries.get(_folder(rel))
        if (
            carrier is None
            or carrier == rel
            or modules.listed[rel] is None
            or provider.is_private(_name(rel))
        ):
            continue
        names = modules.public(rel)
        if names:
            found.append((carrier, rel, names))
    return found
