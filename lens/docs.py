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

Where the documents are and reading them: ``doc_files``; their code blocks and what the
examples bind and reference: ``doc_blocks``; this module reads a tree's documentation into
``Documentation`` and keeps it beside the cache.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import textwrap
import zlib

from relore.lens import cache, cache_files, registry
from relore.lens.doc_blocks import (
    CONSOLE_TAGS,
    MAX_BLOCK_BYTES,
    MAX_BLOCKS,
    MAX_CODE_BYTES,
    PYTHON_TAGS,
    UNSAID,
    _bound,
    _console,
    _count,
    _modules,
    blocks,
)
from relore.lens.doc_files import (
    MAX_DOCUMENT_BYTES,
    MAX_DOCUMENTS,
    SOURCE,
    _discovered,
    _read,
    documents,
)
from relore.lens.providers.base import GrammarUnavailable

# bytes of the tree's source files read for the examples in their docstrings
MAX_SOURCE_BYTES = 8 << 20


# what a kept documentation read holds: another format is read again
DOCS_FORMAT = 2
KEPT = ("counts", "docstrings", "documents", "sources", "blocks", "code_bytes", "cut")


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
        kept_at = os.path.join(
            cache_files.root_directory(env, tree.root), f"docs-{digest:08x}.marshal"
        )
        try:
            kept = marshal.loads(cache_files.read_bytes(kept_at))
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
            cache_files.write_atomic(kept_at, marshal.dumps((fingerprint, kept, discovery)))
    return found
