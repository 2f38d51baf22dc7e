"""One source file read for the lens: ``Read`` (what the verbs get of a file), whether
its bytes hold a name as a whole word, and ``_read_source``: read it through the tree's
confinement and parse it (whole, or only around the names asked) into the blobs the cache
stores. It runs in a worker process as well as here."""

from __future__ import annotations

import functools
from collections import namedtuple

from relore.lens import engine, records, registry
from relore.lens.confine import Beneath
from relore.lens.providers.base import GrammarUnavailable

# a name's places cost a scoped record about 16 µs each (two small queries), a whole
# record about 1.4 parses more than the parse: past one place in this many bytes (some
# 11,000 a megabyte, where ``self`` is one in 340 bytes) the whole record is the cheaper
DENSE_BYTES = 100


# (collections' namedtuple, not typing's: typing stays unimported, a cached answer's start
# counts)
class Read(namedtuple("Read", "has_error definitions counts occurrences exports", defaults=[None])):
    """One source file as the verbs read it: ``has_error`` (bool), ``definitions`` (list);
    ``counts`` for ``map`` (name -> (bare references, references through an object)),
    ``occurrences`` (of the name asked, or all) for ``refs``, None when not asked for;
    ``exports``, what it declares public (``Provider.exports``), None by default."""

    __slots__ = ()


# the bytes of an ASCII identifier: a whole word's neighbours are none of these
_IDENTIFIER = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _holds(data: bytes, name: str) -> bool:
    """Whether ``data`` holds ``name`` as a whole word: an identifier ``parse`` never sits
    next to another identifier character, so ``parser`` and ``urlparse`` do not count. A
    non-ASCII name (a neighbour could be a letter) only needs its bytes. By ``bytes.find``:
    sre searches a pattern that opens with a lookbehind byte by byte (7x slower here)."""
    needle = name.encode("utf-8")
    if not name.isascii():
        return needle in data
    ident, width, size = _IDENTIFIER, len(needle), len(data)
    at = data.find(needle)
    while at >= 0:
        after = at + width
        if (at == 0 or data[at - 1] not in ident) and (after >= size or data[after] not in ident):
            return True
        at = data.find(needle, at + 1)
    return False


@functools.lru_cache(maxsize=16)
def _definition(language: str, name: str):
    return registry.by_name(language).definition_pattern(name)


def _read_source(job: tuple[str, str, str | None, bool, tuple | None], beneath: Beneath) -> tuple:
    """Read one file (through ``beneath``: never a link) and parse it unless it is binary
    or cannot hold the name. Runs in a worker process, so it returns bytes: the record's
    three blobs as the cache stores them, the names it holds, and the names it covers:
    ``covers`` (from the job) when only those names' rows were found
    (``engine.extract_names``), None for a whole record. A file is read with ``os.read``:
    half the cost of ``open().read()``, which counts when a cold scan reads every file of a
    tree for a name."""
    full, language, name, defining, covers = job
    try:
        data = beneath.read(full)[0]
    except OSError:
        return ("missing",)
    if b"\0" in data[:8192]:
        return ("binary",)
    if name is not None:
        if not _holds(data, name):
            return ("without",)
        definition = _definition(language, name) if defining else None
        if definition is not None and not definition.search(data):
            return ("undefined",)  # uses the name, defines none of it: not absent
    if covers is not None and DENSE_BYTES * sum(data.count(n.encode()) for n in covers) > len(data):
        covers = None
    try:
        provider = registry.by_name(language)
        if covers is None:
            record = engine.extract(provider, data)
        else:
            record = engine.extract_names(provider, data, covers)
    except GrammarUnavailable as exc:
        return ("no_grammar", str(exc))
    return ("parsed", records.blobs(record, counted=covers is None), list(record[2]), covers)
