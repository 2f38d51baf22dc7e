"""A file's record as the cache keeps it: three blobs, each loaded alone.

- ``HEAD``: ``(has_error, definitions, exports)`` marshalled, what ``defs`` reads (and
  ``map``: ``exports``, what the file declares public);
- ``COUNTS``: per name its references ``(bare, through an object)`` marshalled, what
  ``map`` adds;
- ``OCCURRENCES``: what ``refs`` reads, one name's rows without building any other's: the
  length of a marshalled header ``(has_error, keys, table)`` (4 bytes, little-endian), the
  header, then every name's occurrence rows flattened into int32s. ``keys`` is
  ``b"\0name\0name\0…\0"`` (UTF-8) and ``table`` (int32s) where each name's rows start
  and end. A name holding a NUL is left out: no caller can ask for one (an argument
  cannot hold it).
"""

from __future__ import annotations

import marshal
from array import array

from relore.lens import engine

HEAD, COUNTS, OCCURRENCES = 0, 1, 2  # a record's blobs, in the order stored
ROW = 4  # int32s per occurrence: (name byte, line, column, kind code)


def blobs(record: engine.Record, counted: bool = True) -> tuple[bytes, bytes, bytes]:
    """The record's three blobs; ``counted`` False (a scoped record, whose occurrences are
    some names' alone): no ``COUNTS`` (empty), which ``map`` never reads from it."""
    has_error, definitions, occurrences, exports = record
    names = [name for name in occurrences if "\0" not in name]
    table = array("i", [0])
    values = array("i")
    for name in names:
        for row in occurrences[name]:
            values.extend(row)
        table.append(len(values))
    keys = ("\0" + "\0".join(names) + "\0").encode("utf-8", "surrogateescape")
    header = marshal.dumps((has_error, keys, table.tobytes()))
    return (
        marshal.dumps((has_error, definitions, exports)),
        marshal.dumps(engine.counts(occurrences)) if counted else b"",
        len(header).to_bytes(4, "little") + header + values.tobytes(),
    )


def occurrences(blob: bytes, name: str) -> tuple[int, list[tuple[int, int, int, int]]] | None:
    """``(has_error, name's occurrences)`` from an ``OCCURRENCES`` blob (``has_error`` 0, 1,
    or ``engine.TANGLED``); None when the blob is not one (the cache is not trusted)."""
    try:
        view = memoryview(blob)
        size = int.from_bytes(view[:4], "little")
        has_error, keys, table = marshal.loads(view[4 : 4 + size])
        wanted = b"\0" + name.encode("utf-8", "surrogateescape") + b"\0"
        at = keys.find(wanted) if wanted.count(b"\0") == 2 else -1
        if at < 0:
            return int(has_error), []
        index = keys.count(b"\0", 0, at)  # the NULs before this name: its place in the table
        bounds = array("i")
        bounds.frombytes(table[index * 4 : index * 4 + 8])
        found = array("i")
        found.frombytes(view[4 + size + bounds[0] * 4 : 4 + size + bounds[1] * 4])
        rows = zip(found[0::ROW], found[1::ROW], found[2::ROW], found[3::ROW], strict=True)
        return int(has_error), list(rows)
    except (TypeError, ValueError, IndexError, AttributeError, EOFError):
        return None
