"""Documentation as users: the code a tree's README and docs show, read as a user's file.

A reference graph sees what a package uses of itself; what only its users call
(``httpx.get``, ``Starlette(routes=[Route(...)])``) no file of the package names. The
package's documentation does: its examples call the API the way its users do. ``relore map``
reads them as one more file of the tree (``rank.py``: the documentation node), whose
references count as a user's:

- **where**: the mapped directory's ``README*`` and its ``docs/`` (or ``doc/``) pages
  (Markdown, reST, plain text), and the repository root's ``README*`` when the directory is
  a part git tracks below it. For a directory that is an installed distribution's package
  (a directory of ``site-packages``), the ``*.dist-info`` that owns it (its
  ``top_level.txt``, else its ``RECORD``, lists the directory) carries the README as its
  ``METADATA``'s description. Then the tree's own Python sources, shallowest first: the
  examples in their docstrings and comments (``>>>`` lines, fences, ``code-block``), kept
  apart (``Documentation.docstrings``: ``rank.py`` weighs them apart). An ``examples/``
  directory's ``.py`` files are already code of the tree.
- **what**: fenced blocks tagged Python (```` ```python ````, ``py``, ``pycon``…), reST's
  ``.. code-block:: python`` (``code``, ``sourcecode``, ``doctest``, ``testcode``) and
  ``::`` literal blocks, and ``>>>`` doctest lines anywhere. A block whose language is not
  said (an untagged fence, a ``::`` block) counts only when it parses without an error: a
  shell session is not Python.
- **how**: each block is parsed with the tree's own Python provider. A name the
  document's examples bind themselves is theirs (``def homepage``, ``r = httpx.get(...)``,
  a parameter, a loop variable), and a keyword argument names a parameter
  (``prompt="Your name"`` is not ``click.prompt``). A name reached
  through a module the block imports (``httpx.get``, ``click.command``) or imported by name
  (``from rich import print``) is the package's however the language spells its built-ins;
  any other reference is corrected as a file's is (a bare ``print`` is the built-in's, an
  ``.items()`` a dict's).

The documentation is the tree's own text, and relore indexes trees it does not trust: every
read is bounded (``MAX_*`` below): how many documents and directory entries are looked at,
the bytes read of each, how many blocks and bytes of code are parsed. A document past a
bound is cut and the page says so. Only regular files are read, never through a symbolic
link, and never blocking (a FIFO named README is skipped). Standard library only.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import re
import textwrap
import time
import zlib

from relore.lens import cache, engine, registry
from relore.lens.confine import read_regular
from relore.lens.listing import RACY_NS
from relore.lens.providers.base import GrammarUnavailable

# documents read (READMEs, docs pages, one distribution's METADATA)
MAX_DOCUMENTS = 64
# bytes read of one document; the rest is not looked at
MAX_DOCUMENT_BYTES = 1 << 20
# directory entries looked at: in each docs directory walked, and in site-packages
MAX_ENTRIES = 8192
# docs/ is walked this deep, through at most this many directories
MAX_DEPTH = 3
MAX_DIRECTORIES = 256
# code blocks parsed, the bytes of one (the rest of a longer one is cut at a line's end),
# and their bytes in all. Small on purpose: tree-sitter's queries over a block of deeply
# nested errors (16 kB of "(") take time growing with the square of its size, ~70 ms at
# 4 kB, so the most a hostile documentation costs is 16 such blocks
MAX_BLOCKS = 512
MAX_BLOCK_BYTES = 4096
MAX_CODE_BYTES = 64 * 1024
# bytes of the tree's source files read for the examples in their docstrings
MAX_SOURCE_BYTES = 8 << 20
# bytes of the distributions' RECORD files read while looking for the one owning the tree
MAX_RECORD_BYTES = 16 << 20

DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", "")
DOCS_DIRS = ("docs", "doc")
PYTHON_TAGS = frozenset({"python", "py", "python3", "py3", "pyi", "ipython"})
CONSOLE_TAGS = frozenset({"pycon", "python-repl", "pyrepl", "doctest"})
UNSAID = ""  # a block whose language is not said
# what a kept documentation read holds: another format is read again
DOCS_FORMAT = 2
KEPT = ("counts", "docstrings", "documents", "sources", "blocks", "code_bytes", "cut")
# a document's form: a Markdown page, a reST (or plain text) one, a source file's docstrings
MARKDOWN, REST, SOURCE = "markdown", "rest", "source"
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*\{?\.?([A-Za-z0-9_+-]*)")
_SOURCE_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*\{?\.?([A-Za-z0-9_+-]*)")
_DIRECTIVE = re.compile(
    r"([ \t]*)\.\.[ \t]+(code-block|code|sourcecode|doctest|testcode|ipython)::[ \t]*(\S*)"
)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^#;\n]+)", re.MULTILINE)
_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([^#;\n)]+)", re.MULTILINE)
# a dotted chain (``httpx.get``, ``pkg . routing . serve``), matched from an identifier's
# start only, so one pass over a block
_CHAIN = re.compile(rb"(?<![\w.])[A-Za-z_]\w*(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
# what an example binds itself is read line by line, each line once (no regex here may
# backtrack: an example is untrusted text); a longer line binds nothing
MAX_BINDING_LINE = 400
_TARGETS = re.compile(r"[\w \t,*]+")
_BINDERS = re.compile(r"\b(for|def|lambda)\b")
_AS = re.compile(r"\bas[ \t]+(\w+)")
_KEYWORD = re.compile(rb"[ \t]*=(?!=)")
_WORD = re.compile(r"\w+")


class Documentation:
    """What the documentation showed: per name ``[bare, through an object]`` references,
    and what was read."""

    def __init__(self) -> None:
        self.counts: dict[str, list[int]] = {}  # the documents' (README, docs pages)
        self.docstrings: dict[str, list[int]] = {}  # the source files' docstrings' and comments'
        self.documents: list[str] = []
        self.sources = 0  # source files whose docstrings or comments held an example
        self.blocks = 0
        self.code_bytes = 0
        self.cut = False  # a bound was reached: something was not read

    def full(self) -> bool:
        return self.blocks >= MAX_BLOCKS or self.code_bytes >= MAX_CODE_BYTES


def _read(path: str) -> tuple[bytes, bool] | None:
    """A regular file's first ``MAX_DOCUMENT_BYTES`` (and whether there was more), never
    through a symbolic link nor blocking on a FIFO or device (``confine.read_regular``);
    None if it is not one."""
    try:
        return read_regular(path, MAX_DOCUMENT_BYTES)
    except OSError:
        return None


def _entries(directory: str, listed: list[str]) -> list[os.DirEntry]:
    """``directory``'s entries, sorted; ``listed`` gets the directory (kept with its stat:
    an unchanged directory is not listed again, ``_discovered``)."""
    listed.append(directory)
    found = []
    try:
        with os.scandir(directory) as listing:
            for entry in listing:
                if len(found) >= MAX_ENTRIES:
                    break
                found.append(entry)
    except OSError:
        return []
    return sorted(found, key=lambda e: e.name)


def _is_document(name: str) -> bool:
    stem, dot, suffix = name.rpartition(".")
    suffix = (dot + suffix).lower() if dot else ""
    return suffix in DOC_SUFFIXES and bool(stem or not dot)


def _readmes(directory: str, listed: list[str]) -> list[str]:
    return [
        e.path
        for e in _entries(directory, listed)
        if e.name.lower().startswith("readme")
        and _is_document(e.name)
        and e.is_file(follow_symlinks=False)
    ]


def _docs_pages(directory: str, listed: list[str]) -> list[str]:
    pages: list[str] = []
    visited = 0
    for name in DOCS_DIRS:
        stack = [(os.path.join(directory, name), 0)]
        while stack and len(pages) < MAX_DOCUMENTS and visited < MAX_DIRECTORIES:
            here, depth = stack.pop()
            visited += 1
            for e in _entries(here, listed):
                if e.is_dir(follow_symlinks=False) and depth < MAX_DEPTH:
                    stack.append((e.path, depth + 1))
                elif (
                    e.is_file(follow_symlinks=False)
                    and "." in e.name
                    and _is_document(e.name)
                    and not e.name.startswith(".")
                ):
                    pages.append(e.path)
    return sorted(pages)


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def _owning_distribution(package_dir: str, listed: list[str]) -> str | None:
    """The ``*.dist-info`` beside ``package_dir`` that installed it, or None."""
    parent, package = os.path.split(package_dir.rstrip(os.sep))
    if not package.isidentifier():
        return None
    infos = [e for e in _entries(parent, listed) if e.name.endswith(".dist-info")]
    if not infos:
        return None
    wanted = _normalised(package)
    named = [e for e in infos if _normalised(e.name.partition("-")[0]) == wanted]
    others = [e for e in infos if e not in named]
    budget = MAX_RECORD_BYTES
    for entries, use_record in ((named, True), (others, False), (others, True)):
        for info in entries:
            if not use_record:
                top = _read(os.path.join(info.path, "top_level.txt"))
                if top and package in _lines(top[0]):
                    return info.path
                continue
            if budget <= 0:
                return None
            record = _read(os.path.join(info.path, "RECORD"))
            if record is None:
                continue
            budget -= len(record[0])
            prefix = package.encode() + b"/"
            if record[0].startswith(prefix) or b"\n" + prefix in record[0]:
                return info.path
    return None


def _description(metadata: bytes) -> tuple[str, bool]:
    """A METADATA's long description and whether it is Markdown (the body after the
    headers, else the ``Description:`` header and its continuation lines)."""
    text = metadata.decode("utf-8", "replace")
    head, _blank, body = text.partition("\n\n")
    markdown = False
    description: list[str] = []
    within = False
    for line in head.splitlines():
        key, _colon, value = line.partition(":")
        if line[:1] in (" ", "\t"):
            if within:
                rest = line.lstrip()
                description.append(rest[1:] if rest.startswith("|") else line[8:])
            continue
        within = key.lower() == "description"
        if within:
            description.append(value.strip())
        elif key.lower() == "description-content-type":
            markdown = "markdown" in value.lower()
    return (body if body.strip() else "\n".join(description)), markdown


def _tree_documents(root: str, scope: str, tracked: bool, listed: list[str]) -> list[str]:
    """The tree's own documents at ``scope``, at most ``MAX_DOCUMENTS``. ``root``'s README
    counts when ``scope`` is a part of the repository git tracks below it (an ignored
    ``.venv`` is not the repository's). ``listed`` gets every directory looked at."""
    listed.append(scope)
    if not os.path.isdir(scope):
        return []
    paths = _readmes(scope, listed)
    if tracked and os.path.normpath(root) != os.path.normpath(scope):
        paths += _readmes(root, listed)
    return (paths + _docs_pages(scope, listed))[:MAX_DOCUMENTS]


def _distribution_documents(scope: str, listed: list[str]) -> list[str]:
    """The METADATA of the distribution that installed ``scope``, if one did."""
    info = _owning_distribution(scope, listed) if os.path.isdir(scope) else None
    return [os.path.join(info, "METADATA")] if info is not None else []


def _document_paths(root: str, scope: str, tracked: bool, listed: list[str]) -> list[str]:
    """The documents of the tree mapped at ``scope``: its own, its distribution's METADATA
    last."""
    paths = _tree_documents(root, scope, tracked, listed)
    return paths + (_distribution_documents(scope, listed) if len(paths) < MAX_DOCUMENTS else [])


def _directory_stat(path: str) -> tuple | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _kept_or_found(kept, find) -> tuple[list[str], tuple | None]:
    """``(paths, discovery)``: ``kept`` (a discovery as this returns it) when every
    directory it looked at has the stat it had, else ``find(listed)`` again. A directory
    changed within ``listing.RACY_NS`` (a file may still land in it within its mtime's tick)
    is not kept: None."""
    if type(kept) is tuple and len(kept) == 2 and type(kept[0]) is tuple:
        directories, paths = kept
        if all(
            type(d) is tuple and len(d) == 2 and _directory_stat(d[0]) == d[1] for d in directories
        ):
            return list(paths), kept
    listed: list[str] = []
    paths = find(listed)
    directories = tuple((d, _directory_stat(d)) for d in dict.fromkeys(listed))
    now = time.time_ns()
    if any(st is not None and now - st[0] < RACY_NS for _d, st in directories):
        return paths, None
    return paths, (directories, tuple(paths))


def _discovered(root: str, scope: str, tracked: bool, kept) -> tuple[list[str], tuple]:
    """``(paths, discovery)``: ``_document_paths``, from what the last map kept where the
    directories it listed are unchanged, so a map of an unchanged tree lists none of them
    and reads no distribution's RECORD. The tree's documents and its distribution's are
    kept apart: a site-packages that changed (a package installed beside it) does not make
    the tree's own directories listed again."""
    own, distribution = kept if type(kept) is tuple and len(kept) == 2 else (None, None)
    paths, own = _kept_or_found(own, lambda listed: _tree_documents(root, scope, tracked, listed))
    if len(paths) >= MAX_DOCUMENTS:
        return paths, (own, None)
    more, distribution = _kept_or_found(
        distribution, lambda listed: _distribution_documents(scope, listed)
    )
    return paths + more, (own, distribution)


def documents(
    root: str, scope: str, tracked: bool, paths: list[str] | None = None
) -> list[tuple[str, str, str, bool]]:
    """``(path, text, form, cut)`` of each document (``paths``, else
    ``_document_paths``): ``MARKDOWN``, else ``REST`` (reST or plain text)."""
    found = []
    if paths is None:
        paths = _document_paths(root, scope, tracked, [])
    for path in paths:
        read = _read(path)
        if read is None:
            continue
        if os.path.basename(path) == "METADATA" and path.endswith(".dist-info/METADATA"):
            text, markdown = _description(read[0])
        else:
            text = read[0].decode("utf-8", "replace")
            markdown = path.lower().endswith((".md", ".markdown"))
        found.append((path, text, MARKDOWN if markdown else REST, read[1]))
    return found


def _console(lines: list[str]) -> str:
    """The statements of ``>>>`` / ``...`` lines, prompts removed (their output is not)."""
    kept = []
    for line in textwrap.dedent("\n".join(lines)).splitlines():
        if line.startswith((">>> ", "... ")) or line in (">>>", "..."):
            kept.append(line[4:])
    return "\n".join(kept)


def _indented_block(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines from ``start`` indented deeper than ``indent`` (blank lines inside), and
    where the block ends."""
    end = start
    body = []
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
        end += 1
    return body, end


def blocks(text: str, form: str) -> list[tuple[str, str]]:
    """``(language tag, lines)`` of every code block of a document in ``form`` (``MARKDOWN``,
    ``REST``, or ``SOURCE``: a source file's docstrings and comments, where a fence may be
    indented and a ``::`` is not a literal block), in order: ``"pycon"`` for ``>>>`` lines,
    ``UNSAID`` when the document does not say. One pass over the lines."""
    lines = text.splitlines()
    markdown = form == MARKDOWN
    fences = _FENCE if markdown else _SOURCE_FENCE if form == SOURCE else None
    literal = form == REST
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(lines) and len(found) < MAX_BLOCKS:
        line = lines[i]
        stripped = line.strip()
        fence = fences.match(line) if fences is not None else None
        if fence:
            mark = fence.group(1)
            body = []
            i += 1
            while i < len(lines):
                close = lines[i].strip()
                if close.startswith(mark) and not close.strip(mark[0]):
                    break
                body.append(lines[i])
                i += 1
            found.append((fence.group(2).lower(), "\n".join(body)))
            i += 1
            continue
        directive = None if markdown else _DIRECTIVE.match(line)
        if directive or (literal and stripped.endswith("::") and not stripped.startswith("..")):
            indent = len(line) - len(line.lstrip())
            i += 1
            while directive and i < len(lines) and lines[i].strip().startswith(":"):
                i += 1  # the directive's options
            body, i = _indented_block(lines, i, indent)
            if directive:
                kind, tag = directive.group(2), directive.group(3).lower()
                tag = {"doctest": "pycon", "testcode": "python", "ipython": "python"}.get(kind, tag)
            else:
                tag = UNSAID
            found.append((tag, "\n".join(body)))
            continue
        if stripped.startswith(">>>"):
            body = []
            while i < len(lines) and lines[i].strip().startswith((">>>", "...")):
                body.append(lines[i].strip())
                i += 1
            found.append(("pycon", "\n".join(body)))
            continue
        i += 1
    return found


def _modules(code: str) -> tuple[set[str], set[str], set[str]]:
    """The names a block binds to modules (``import httpx``, ``import a.b as c``), the
    names it imports from one (``from rich import print``), and the modules' own names
    (``a``, ``b``: a path, not a use of the package's definitions)."""
    modules, imported, paths = set(), set(), set()
    for match in _IMPORT.finditer(code):
        for part in match.group(1).split(","):
            words = part.split()
            if not words:
                continue
            paths.update(words[0].split("."))
            modules.add(
                words[2] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0]
            )
    for match in _FROM.finditer(code):
        paths.update(match.group(1).split("."))
        for part in match.group(2).split(","):
            words = part.split()
            if words:
                imported.add(words[0])
    return modules, imported, paths - imported


def _bound(code: str) -> set[str]:
    """The names an example binds itself (``r = httpx.get(...)``, ``def app(scope)``,
    ``for _ in``, ``as client``): its own, not the package's."""
    bound: set[str] = set()
    for line in code.splitlines():
        if len(line) > MAX_BINDING_LINE:
            continue
        stripped = line.strip()
        lists = []
        head, equals, rest = stripped.partition("=")
        if equals and not rest.startswith("=") and head[-1:] not in "<>!=+-*/%&|^@":
            target = head.partition(":")[0]  # x: int = 1
            if _TARGETS.fullmatch(target):
                lists.append(target)
        for binder in _BINDERS.finditer(stripped):
            after = stripped[binder.end() :]
            if binder.group(1) == "for":
                lists.append(after.partition(" in ")[0])
            elif binder.group(1) == "def":
                lists.append(after.partition("(")[2].partition(")")[0])
            else:
                lists.append(after.partition(":")[0])
        for listed in lists:
            for part in listed.split(","):
                word = _WORD.search(part.partition(":")[0].partition("=")[0])
                if word:
                    bound.add(word.group())
        bound.update(m.group(1) for m in _AS.finditer(line))
    return bound


TEST_DIRS = frozenset({"test", "tests", "testing"})


def _is_test(rel: str) -> bool:
    *folders, name = rel.split("/")
    return (
        any(folder in TEST_DIRS for folder in folders)
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def _source_texts(root: str, sources: list[str]):
    """``(path, text, SOURCE, cut)`` of the source files holding an example (a ``>>>``
    line, a fence, a ``code-block``), shallowest first (a package's surface before its
    internals), until ``MAX_SOURCE_BYTES`` were read in all."""
    budget = MAX_SOURCE_BYTES
    for rel in sorted(sources, key=lambda rel: (rel.count("/"), rel)):
        if _is_test(rel):
            continue  # a test's strings are its fixtures (a README it writes), not documentation
        if budget <= 0:
            yield None
            return
        read = _read(os.path.join(root, rel))
        if read is None:
            continue
        data = read[0][:budget]
        budget -= len(data)
        if b">>>" in data or b"```" in data or b".. code" in data:
            yield rel, data.decode("utf-8", "replace"), SOURCE, read[1] or len(data) < len(read[0])


def read(
    root: str, scope: str, tracked: bool, provider, sources=(), paths: list[str] | None = None
) -> Documentation:
    """The documentation of the tree at ``scope``, parsed with ``provider`` (Python's):
    its documents (``paths``, else looked for), then the examples in ``sources`` (paths
    under ``root``)."""
    found = Documentation()
    texts = itertools.chain(
        documents(root, scope, tracked, paths), _source_texts(root, list(sources))
    )
    for document in texts:
        if document is None or found.full():
            found.cut = True
            break
        path, text, form, cut = document
        if form == SOURCE:
            found.sources += 1
        else:
            found.documents.append(path)
        listed = blocks(text, form)
        found.cut |= cut or len(listed) >= MAX_BLOCKS
        codes = []
        for tag, body in listed:
            if found.full():
                found.cut = True
                break
            console = tag in CONSOLE_TAGS or body.lstrip().startswith(">>>")
            if not console and tag not in PYTHON_TAGS and tag != UNSAID:
                continue  # shell, json, another language
            code = _console(body.splitlines()) if console else textwrap.dedent(body)
            if not code.strip():
                continue
            source = code.encode("utf-8", "replace")
            room = min(MAX_BLOCK_BYTES, MAX_CODE_BYTES - found.code_bytes)
            if len(source) > room:
                cut_at = source.rfind(b"\n", 0, room + 1)
                source, found.cut = source[: cut_at if cut_at > 0 else room], True
            found.blocks += 1
            found.code_bytes += len(source)
            codes.append((source, console or tag != UNSAID))
        # a document's examples build on each other: what one imports or binds, the next uses
        text = "\n".join(source.decode("utf-8", "replace") for source, _said in codes)
        modules, imported, paths = _modules(text)
        bound = _bound(text) - imported
        into = found.docstrings if form == SOURCE else found.counts
        for source, said in codes:
            _count(into, source, provider, said, (modules, imported, paths, bound))
    return found


def _count(into: dict, source: bytes, provider, said: bool, context) -> None:
    has_error, definitions, occurrences, _exports = engine.extract(provider, source)
    if has_error and not said:
        return  # an untagged block that is not Python
    modules, imported, paths, bound = context
    own = {d[0] for d in definitions} | bound
    qualified = set()  # where a name is reached through a module the examples import
    for chain in _CHAIN.finditer(source) if modules else ():
        parts = list(_IDENTIFIER.finditer(chain.group()))
        if parts[0].group().decode() in modules:
            qualified.update(chain.start() + part.start() for part in parts[1:])
    for name, places in occurrences.items():
        if name in modules or name in paths:
            continue
        for byte, _line, _column, code in places:
            if code == engine.DEFINITION or _KEYWORD.match(source, byte + len(name.encode())):
                continue  # a keyword argument names a parameter, not a definition
            if engine.local(code):
                continue  # a parameter or a local of the example's own function
            if name in own and not engine.through(code):
                continue  # the example's own (``@Request.application def application``)
            if engine.through(code):
                if byte in qualified:
                    slot = 0  # httpx.get: the package's, by its module
                elif name in provider.builtin_methods:
                    continue  # r.headers.get: a dict's
                else:
                    slot = 1
            elif name in provider.builtin_names and name not in imported:
                continue  # print: the built-in, unless the block imported it
            else:
                slot = 0
            into.setdefault(name, [0, 0])[slot] += 1


def _fingerprint(scope: str, tracked: bool, root: str, paths: list[str], sources: list[str]):
    """What a documentation read depends on: the documents (``paths``) and the source files
    it would read (each one's path, size, mtime and inode), the grammar, and this module's
    bounds."""
    seen = []
    for path in paths:
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        seen.append((path, st.st_size, st.st_mtime_ns, st.st_ino))
    budget = MAX_SOURCE_BYTES
    for rel in sorted(sources, key=lambda rel: (rel.count("/"), rel)):
        if budget <= 0:
            break
        if _is_test(rel):
            continue
        try:
            st = os.stat(os.path.join(root, rel), follow_symlinks=False)
        except OSError:
            continue
        budget -= st.st_size
        seen.append((rel, st.st_size, st.st_mtime_ns, st.st_ino))
    bounds = (MAX_DOCUMENTS, MAX_DOCUMENT_BYTES, MAX_BLOCKS, MAX_BLOCK_BYTES, MAX_CODE_BYTES)
    return marshal.dumps((DOCS_FORMAT, cache.stamp(), bounds, scope, tracked, seen))


def tree_documentation(tree, records, env=None) -> Documentation | None:
    """``read`` for a mapped tree holding Python (the only language its examples are read
    in), None otherwise or when the grammar is missing. With ``env``, what was read is kept
    in the code cache beside the tree's records, keyed by ``_fingerprint`` (a scope whose
    file name another's shares writes over it: read again, never answered wrong): a map of
    an unchanged tree neither loads the grammar nor parses its documentation again."""
    if tree.listing == "file" or not any(language == "python" for _r, language, _x in records):
        return None
    sources = [rel for rel, language, _record in records if language == "python"]
    tracked = tree.listing == "git"
    kept_at = fingerprint = discovery = paths = None
    if env is not None:
        digest = zlib.crc32(tree.scope.encode("utf-8", "surrogateescape"))
        kept_at = os.path.join(cache.root_directory(env, tree.root), f"docs-{digest:08x}.marshal")
        try:
            kept = marshal.loads(cache.read_bytes(kept_at))
        except (OSError, EOFError, ValueError, TypeError):
            kept = None  # none kept, or not ours: read again
        if type(kept) is not tuple or len(kept) != 3:
            kept = (None, None, None)
        paths, discovery = _discovered(tree.root, tree.scope, tracked, kept[2])
        fingerprint = _fingerprint(tree.scope, tracked, tree.root, paths, sources)
        if kept[0] == fingerprint and type(kept[1]) is tuple and len(kept[1]) == len(KEPT):
            found = Documentation()
            for field, value in zip(KEPT, kept[1], strict=True):
                setattr(found, field, value)
            return found
    try:
        found = read(tree.root, tree.scope, tracked, registry.by_name("python"), sources, paths)
    except GrammarUnavailable:
        return None
    if kept_at is not None:
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(kept_at), exist_ok=True)
            kept = tuple(getattr(found, field) for field in KEPT)
            cache.write_atomic(kept_at, marshal.dumps((fingerprint, kept, discovery)))
    return found
