"""``relore map``'s order: how the tree uses its definitions, not how often a word appears.

The tree is a graph of files (aider's repository map: PageRank over a file graph whose edges
are identifier references from the referencing file to the defining file). A file passes
its weight to the files defining the names it references; a file's weight is its PageRank,
and a name's score is the weight flowing into it. So a name many weighty files use outranks
one a single file uses a hundred times, and a file's references to its own definitions are
not edges: the map is about what the rest of the tree uses.

References are matched to definitions by spelling (no imports, no types are resolved), so
each reference is read with the corrections a reader would make:

- **Kind.** A bare name (``Request`` in an import, ``scope`` as a parameter, ``helper()``)
  can mean a function, class or type, never a method, which is reached through an object
  (``request.scope``, ``client.get(...)``: ``engine.THROUGH``). A reference through an
  object names no receiver, so it weighs ``THROUGH_WEIGHT``.
- **Local.** A definition inside a function is that function's: no other file can name it,
  and it is no entry of the map. A parameter or a name a function, lambda or comprehension
  binds (``engine.LOCAL``: ``params``, a comprehension's ``r``) names nothing outside it: it
  is no reference (``engine.counts`` leaves it out), however another file's function is
  spelled.
- **The language's own.** A bare name the language defines (``len``, ``print``) means the
  built-in; a method of a built-in type reached through an object (``.items()``,
  ``.append(...)``) means that type's. The provider lists both; such references are not
  edges.
- **Ambiguity.** A reference to a name several files define is split evenly among them;
  one defined in more than ``AMBIGUOUS_FILES`` files weighs ``AMBIGUOUS_WEIGHT`` (aider),
  and one defined in more than ``EVERYWHERE_SHARE`` of the defining files (and more than
  ``AMBIGUOUS_FILES``) says nothing about any of them: it is left out and counted, as
  dunders are.
- **Privacy.** A private name (``_helper``) weighs ``PRIVATE_WEIGHT`` (aider).
- **Repetition.** ``n`` references from one file to one name weigh ``sqrt(n)`` (aider).

Where the walk starts (personalisation): at a reference, not at a file, so a generated table
naming one class is one reference's worth, not a whole file's; a file passes on its weight
in proportion to its references, up to a typical file's (the median), and the rest returns
to the start. Half the starts are at the package's entry files (the shallowest
``__init__.py``, ``index.ts``, ``lib.rs``…: what its users import), when they reference
anything. ``focus`` (the caller's paths) replaces both: every start is there, and the map is
the tree as seen from it.

What only the package's users use, no file of the tree references (``httpx.get`` is
re-exported by ``from ._api import *``). The package declares it instead (``surface.py``:
``__all__``, an ``__init__``'s re-exports, a public module's ``__all__``), and each declared
name becomes an edge from the package's entry file, standing in for its users: an entry
file's own declaration weighs ``EXPORT_WEIGHT`` references a name, a public module's
``MODULE_WEIGHT``, and a declaration of more than ``EXPORT_NAMES`` names shares that many
names' worth (a huge ``__all__`` is one declaration, thinly spread). The edges also count
in where walks start (a reference's mass), so a package that declares more starts more of
them at its entry file. A tree with no entry file declares nothing and ranks as it did.

A declaration is a set, not an order: which of a package's sixty public names its users
call most is in its users. Its documentation holds some (``docs.py``): the code its README,
docs pages or installed METADATA show, and the examples in its docstrings, call the API
the way its users do. Each is a node of its own, a file no file links to, whose references
are edges as a file's are: ``DOC_SHARE`` of the walks start at the documents,
``DOCSTRING_SHARE`` at the docstrings (none with ``focus``), and each passes on all it has
(no median cap: a README showing four names gives them all its weight). What a documented
name's module defines beside it is the same module's API (``Route`` shown, ``Mount``
beside it): the documents' node also links the public top-level functions and classes of
each file defining a name it shows, ``BESIDE_WEIGHT`` of that name's weight shared among
them.

``THROUGH_WEIGHT``, ``walk.ENTRY_SHARE``, ``EXPORT_WEIGHT``, ``MODULE_WEIGHT``, ``DOC_SHARE``,
``DOCSTRING_SHARE``, ``BESIDE_WEIGHT``, the self-reference rule and the median cap were
chosen by reading the maps of five installed packages (requests, jinja2, uvicorn, werkzeug,
rich; ``benchmarks/code_lens.py --tuning``), never of the held-out ones whose entry points
``benchmarks/code_lens.py --entry-points`` checks. Pure standard library: the client
imports no numeric package.
"""

from __future__ import annotations

import math

from relore.lens import registry, surface, walk

SCORE = "how the tree's other files use it (PageRank over their references)"
AMBIGUOUS_FILES = 5
AMBIGUOUS_WEIGHT = 0.1
EVERYWHERE_SHARE = 0.1
PRIVATE_WEIGHT = 0.1
THROUGH_WEIGHT = 0.5
# a name a package declares public (``surface.py``) weighs this many references from its
# entry file; a declaration of more than EXPORT_NAMES names shares EXPORT_NAMES' worth
EXPORT_WEIGHT = 8.0
EXPORT_NAMES = 100
# a public module's own ``__all__``, carried by its package's entry file
MODULE_WEIGHT = 1.0
# the share of walks that start at the documentation's examples (``docs.py``): its
# documents' (README, docs pages, an installed METADATA), its source files' docstrings';
# each a user of the tree whose references weigh as a file's
DOC_SHARE = 0.3
DOCSTRING_SHARE = 0.1
# what the documents' modules define beside what they show shares this much of each
# documented name's weight (the docstrings' examples spread nothing beside)
BESIDE_WEIGHT = 0.2
# definition kinds reached through an object, never by a bare name
METHOD_KINDS = frozenset({"method"})
# a definition directly inside one of these is local to it
FUNCTION_KINDS = frozenset({"function", "method"})


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _in_function(qualified: str, kind_of: dict[str, str]) -> bool:
    """Whether a definition so qualified is inside a function (a class in one included)."""
    while "." in qualified:
        qualified = qualified.rpartition(".")[0]
        if kind_of.get(qualified) in FUNCTION_KINDS:
            return True
    return False


class _Targets:
    """Each name's two targets: every definer (through an object) and the definers a bare
    name can reach (functions, classes, types)."""

    def __init__(self) -> None:
        self.files: list[list[int]] = []
        self.of: dict[str, tuple[int, int | None]] = {}

    def add(self, name: str, through: list[int], bare: list[int]) -> None:
        self.files.append(through)
        bare_target = None
        if bare:
            self.files.append(bare)
            bare_target = len(self.files) - 1
        self.of[name] = (len(self.files) - 1 - (bare_target is not None), bare_target)


def rank(
    records: list[tuple[str, str, tuple]],
    focus: list[str] | None = None,
    offset: int = 0,
    limit: int | None = None,
    documentation=None,
) -> tuple[list[dict], int, dict]:
    """The entries from ``offset`` (``limit`` of them, or all), best first; how many names
    were ranked; and what the ranking left out or started from.

    ``records`` are ``(relative path, language, record)`` as ``tree_scan.scan`` returns them;
    ``focus`` lists relative paths (a directory ends ``/``; ``""`` is the whole root). An
    entry's ``places`` are its definitions, the most used first.
    """
    providers = {p.name: p for p in registry.PROVIDERS}
    files = [rel for rel, _language, _record in records]
    position = {rel: i for i, rel in enumerate(files)}
    definitions: dict[str, list[tuple[str, tuple]]] = {}
    dunder_names: set[str] = set()
    dunder_defs = defining_files = 0
    for rel, _language, record in records:
        defining_files += bool(record.definitions)
        kind_of = {d[2]: d[1] for d in record.definitions}
        for d in record.definitions:
            if is_dunder(d[0]):
                dunder_names.add(d[0])
                dunder_defs += 1
                continue
            if not _in_function(d[2], kind_of):
                definitions.setdefault(d[0], []).append((rel, d))
    everywhere = max(AMBIGUOUS_FILES, EVERYWHERE_SHARE * defining_files)
    excluded: dict[str, int] = {}
    targets = _Targets()
    for name, places in list(definitions.items()):
        if len({rel for rel, _d in places}) > everywhere:
            excluded[name] = len(places)
            del definitions[name]
            continue
        targets.add(
            name,
            sorted({position[rel] for rel, _d in places}),
            sorted({position[rel] for rel, d in places if d[1] not in METHOD_KINDS}),
        )
    edges, references, referenced_from = _edges(records, targets, providers)
    declared = _declared(records, targets, providers, position, edges)
    personal, entry = walk.personalisation(records, focus, edges, providers)
    # the documentation: a node of its own for its documents and one for the docstrings'
    # examples, users of the tree no file links to
    documented: dict[str, int] = {}
    shares = []
    if documentation is not None and files:
        for counts, share, beside in (
            (documentation.counts, DOC_SHARE, BESIDE_WEIGHT),
            (documentation.docstrings, DOCSTRING_SHARE, 0.0),
        ):
            found = _documented(counts, targets, providers)
            if found:
                edges.append(
                    [edge for _n, out in found.values() for edge in out]
                    + _beside(found, beside, records, targets, providers)
                )
                shares.append(0.0 if focus else share)
                for name, (n, _out) in found.items():
                    documented[name] = documented.get(name, 0) + n
    if shares:
        personal = [(1.0 - sum(shares)) * p for p in personal] + shares
    ranks, inflow = (
        walk.pagerank(edges, targets.files, personal, whole=len(files)) if files else ([], [])
    )
    scale = len(files)  # a name receiving one average file's weight scores 1
    order = []
    for name, places in definitions.items():
        flow = sum(inflow[t] for t in targets.of.get(name, ()) if t is not None)
        best_file = max(ranks[position[rel]] for rel, _d in places)
        order.append((-flow, -best_file, name))
    order.sort()
    entries = []
    for _flow, _best, name in order[offset : None if limit is None else offset + limit]:
        per_file: dict[int, float] = {}
        for t in targets.of.get(name, ()):
            if t is not None:
                for f in targets.files[t]:
                    per_file[f] = per_file.get(f, 0.0) + inflow[t] / len(targets.files[t])
        places = definitions[name]
        entries.append(
            {
                "name": name,
                "score": -_flow * scale,
                "references": references.get(name, 0),
                "referenced_from": referenced_from.get(name, 0),
                "definitions": len(places),
                "documented": documented.get(name, 0),
                "places": sorted(
                    places,
                    key=lambda p: (-per_file.get(position[p[0]], 0.0), p[0], p[1][3]),
                ),
            }
        )
    info = {
        "dunders": {"names": len(dunder_names), "definitions": dunder_defs},
        "everywhere": {
            "names": len(excluded),
            "definitions": sum(excluded.values()),
            "more_files_than": math.floor(everywhere),
        },
        "entry_files": entry,
        "declared": declared,
        "documentation": _documentation_info(documentation, documented),
    }
    return entries, len(order), info


def _documentation_info(documentation, documented: dict) -> dict:
    if documentation is None:
        return {"documents": [], "sources": 0, "blocks": 0, "names": 0, "cut": False}
    return {
        "documents": list(documentation.documents),
        "sources": documentation.sources,
        "blocks": documentation.blocks,
        "names": len(documented),
        "cut": documentation.cut,
    }


def _documented(counts: dict, targets: _Targets, providers: dict) -> dict:
    """Per name the documentation's references to the tree's definition of it, and their
    edges from the documentation's node, corrected as a file's are (the built-ins were
    already, in ``docs.py``: a module-qualified ``httpx.get`` is the package's)."""
    is_private = providers["python"].is_private if "python" in providers else None
    found: dict[str, tuple[int, list[tuple[int, float]]]] = {}
    for name, (bare, through) in counts.items():
        target = targets.of.get(name)
        if target is None:
            continue
        if target[1] is None:
            bare = 0
        if not bare and not through:
            continue
        weight = PRIVATE_WEIGHT if is_private is not None and is_private(name) else 1.0
        if len(targets.files[target[0]]) > AMBIGUOUS_FILES:
            weight *= AMBIGUOUS_WEIGHT
        out = []
        if through:
            out.append((target[0], THROUGH_WEIGHT * weight * math.sqrt(through)))
        if bare:
            out.append((target[1], weight * math.sqrt(bare)))
        found[name] = (bare + through, out)
    return found


def _beside(found: dict, beside: float, records, targets: _Targets, providers: dict) -> list:
    """The documentation's edges to what its modules define beside what it shows: each
    documented name's bare weight, times ``beside``, shared over the public top-level
    functions and classes of the file defining it (``Route`` shown, ``Mount`` beside it)."""
    if not beside:
        return []
    public: dict[int, list[int]] = {}  # file -> its public top-level definitions' targets
    weights: dict[int, float] = {}
    for name, (_n, out) in found.items():
        bare = targets.of[name][1]
        weight = sum(w for t, w in out if t == bare)
        if bare is None or not weight:
            continue
        for f in targets.files[bare]:
            if f not in public:
                _rel, language, record = records[f]
                provider = providers.get(language)
                names = {
                    d[0]
                    for d in record.definitions
                    if d[2] == d[0]
                    and d[1] not in METHOD_KINDS
                    and provider is not None
                    and not provider.is_private(d[0])
                }
                public[f] = [
                    targets.of[n][1]
                    for n in sorted(names)
                    if targets.of.get(n, (0, None))[1] is not None
                ]
            for t in public[f]:
                weights[t] = weights.get(t, 0.0) + beside * weight / len(public[f])
    return sorted(weights.items())


def _edges(records, targets: _Targets, providers: dict) -> tuple[list, dict, dict]:
    """Each file's ``(target, weight)`` edges, and per name its references (kept after the
    corrections) and the files they come from."""
    edges: list[list[tuple[int, float]]] = []
    references: dict[str, int] = {}
    referenced_from: dict[str, int] = {}
    for _rel, language, record in records:
        provider = providers.get(language)
        builtin_names = provider.builtin_names if provider else frozenset()
        builtin_methods = provider.builtin_methods if provider else frozenset()
        is_private = provider.is_private if provider else (lambda name: name.startswith("_"))
        own = {d[0] for d in record.definitions}
        out: list[tuple[int, float]] = []
        for name, (bare, through) in record.counts.items():
            target = targets.of.get(name)
            if target is None or name in own:
                continue
            if target[1] is None or name in builtin_names:
                bare = 0
            if name in builtin_methods:
                through = 0
            if not bare and not through:
                continue
            weight = PRIVATE_WEIGHT if is_private(name) else 1.0
            if len(targets.files[target[0]]) > AMBIGUOUS_FILES:
                weight *= AMBIGUOUS_WEIGHT
            if through:
                out.append((target[0], THROUGH_WEIGHT * weight * math.sqrt(through)))
            if bare:
                out.append((target[1], weight * math.sqrt(bare)))
            references[name] = references.get(name, 0) + bare + through
            referenced_from[name] = referenced_from.get(name, 0) + 1
        edges.append(out)
    return edges, references, referenced_from


def _declared(records, targets: _Targets, providers: dict, position: dict, edges: list) -> dict:
    """Add each declaration's edges to its carrying entry file's (``surface.py``): a name
    weighs ``EXPORT_WEIGHT`` references, corrected as a reference is (privacy, ambiguity),
    shared over ``EXPORT_NAMES`` when the declaration lists more; what the carrier defines
    itself is no edge. Returns how many names and declaring files gave edges."""
    bare = {name: of[1] for name, of in targets.of.items() if of[1] is not None}
    names_with_edges: set[str] = set()
    declaring: set[str] = set()
    for carrier, declarer, names in surface.declarations(records, providers, set(bare)):
        f = position[carrier]
        provider = providers[records[f][1]]
        own = {d[0] for d in records[f][2].definitions}
        kept = [n for n in names if n not in own]
        if not kept:
            continue
        scale = (EXPORT_WEIGHT if declarer == carrier else MODULE_WEIGHT) * min(
            1.0, EXPORT_NAMES / len(kept)
        )
        for name in kept:
            weight = scale * (PRIVATE_WEIGHT if provider.is_private(name) else 1.0)
            if len(targets.files[targets.of[name][0]]) > AMBIGUOUS_FILES:
                weight *= AMBIGUOUS_WEIGHT
            edges[f].append((bare[name], weight))
        names_with_edges.update(kept)
        declaring.add(declarer)
    return {"names": len(names_with_edges), "files": len(declaring)}
