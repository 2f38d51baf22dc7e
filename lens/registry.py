"""Extension → provider, and the refusal to answer with nothing when no grammar loads.

``require_any`` is the guard against the quiet failure this lens once had: with no grammar
installed, a map walked zero files and returned an empty page at exit 0 — a missing install
wearing a real answer. Now that is an error naming the install line.
"""

from __future__ import annotations

import importlib
import os

from relore.lens.providers.base import Provider

INSTALL_LINE = "pip install 'relore[code]'"

# One module per language under providers/, each exporting PROVIDERS.
PROVIDER_MODULES = ("python", "javascript", "typescript", "go", "rust")


class GrammarMissing(RuntimeError):
    """No usable grammar: the code lens cannot read this tree, which is not an empty answer."""


def _load_all() -> tuple[Provider, ...]:
    found: list[Provider] = []
    for module in PROVIDER_MODULES:
        found.extend(importlib.import_module(f"relore.lens.providers.{module}").PROVIDERS)
    return tuple(found)


PROVIDERS: tuple[Provider, ...] = _load_all()


def by_extension(providers: tuple[Provider, ...] | None = None) -> dict[str, Provider]:
    return {ext: p for p in (PROVIDERS if providers is None else providers) for ext in p.extensions}


def by_name(name: str) -> Provider:
    return next(p for p in PROVIDERS if p.name == name)


def for_path(path: str, providers: tuple[Provider, ...] | None = None) -> Provider | None:
    extensions = by_extension(providers)
    return extensions.get(os.path.splitext(path)[1].lower())


def require_any(providers: tuple[Provider, ...] | None = None) -> tuple[Provider, ...]:
    """The providers whose grammar is installed; raises ``GrammarMissing`` when there are
    none. Nothing is imported: a grammar found but broken fails when a file needs it."""
    providers = PROVIDERS if providers is None else providers
    usable = tuple(p for p in providers if p.installed())
    if not usable:
        reasons = "; ".join(p.failure or p.grammar_module for p in providers)
        raise GrammarMissing(
            "the code lens needs tree-sitter and at least one language grammar, and none "
            f"could be loaded ({reasons}): install them with `{INSTALL_LINE}`"
        )
    return usable
