"""The git-ignored half of the lens: parsed records kept outside the indexed tree.

A cache inside the repository (a committed ``.relore/``) was ruled out: it moves staleness
into the client and lets repo-supplied structure steer ``defs``/``refs``. This one lives in
``$RELORE_CODE_CACHE``, else ``$XDG_CACHE_HOME/relore/code``, else ``~/.cache/relore/code``,
one directory per tree root:

- ``index.marshal``: the grammar versions that produced it (``stamp``), and per file its
  ``stat`` (mtime, size, inode), a file id and where its record is. A file whose ``stat``
  still matches is trusted without being opened: revalidation reads no file.
- ``seg-*.marshal``: records, appended a run at a time and never changed; each file's
  record is three blobs (``records.py``): its head (syntax errors, definitions: what
  ``defs`` reads), its reference counts per name (what ``map`` adds) and its occurrences,
  found by name (``refs`` unpacks one name). A record ``defs``/``refs`` parsed for a name
  is scoped to the names it covers (the entry's ``COVERS`` field;
  ``engine.extract_names``): its head holds the definitions around their places alone and
  no exports, it has no counts, and its occurrences are theirs. It answers for those
  names and no other: ``map`` or another name reads the file again.
- ``names-<generation>-<k>.marshal`` (``SHARDS`` shards by the name's CRC): per name, the
  file ids whose record holds it (``postings``; a scoped record: of the names it covers),
  and the ids of files read and found without it but not parsed for it (``absent``, for
  the last ``ABSENT_NAMES`` names asked: unparsed files, and scoped records of other
  names). A
  name's lookup loads one shard; ``defs``/``refs`` then open only the records that hold it.

- ``dirs.marshal``: the directory listings of a walk without git (``listing.py``).

The index is replaced atomically and names its generation; shards and segments are written
before it and never modified, so a reader sees one consistent set or, when a concurrent
writer removed what it points at, a miss it re-parses. It is a cache: anything unreadable
is dropped and rebuilt, never trusted.

Where the cache lives and its file primitives: ``cache_files``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import marshal
import os
import sys
import zlib

from relore.lens.cache_files import _load, _token, read_bytes, root_directory, write_atomic

FORMAT = 7
# what produces the records: tree-sitter and every grammar module
PRODUCERS = (
    "tree_sitter",
    "tree_sitter_python",
    "tree_sitter_javascript",
    "tree_sitter_typescript",
    "tree_sitter_go",
    "tree_sitter_rust",
)
SHARDS = 16
ABSENT_NAMES = 64
# where a file's record is: a segment name, or one of these
UNPARSED = ""  # stat known, read for a name it lacked, not parsed
BINARY = "-"  # not source: never parsed
# a parsed entry's field after its blobs' lengths, in a record of some names' rows alone
COVERS = 10
# a run's garbage (records of changed or deleted files) is compacted away when it exceeds
# the live records and this many bytes
COMPACT_BYTES = 8_000_000


def stamp() -> str:
    """What produced the records: another record format, Python, or any installed
    tree-sitter or grammar (its module file's path, size and mtime: a reinstall counts)
    invalidates the cache. Found without importing anything or reading package metadata."""
    parts = [f"format={FORMAT}", f"python={sys.version_info[:2]}"]
    for module in PRODUCERS:
        try:
            spec = importlib.util.find_spec(module)
            st = os.stat(spec.origin) if spec is not None and spec.origin else None
        except (ImportError, ValueError, OSError):
            spec = st = None
        found = f"{spec.origin}:{st.st_size}:{st.st_mtime_ns}" if st else "-"
        parts.append(f"{module}={found}")
    return ";".join(parts)


def shard_of(name: str) -> int:
    return zlib.crc32(name.encode("utf-8", "surrogateescape")) % SHARDS


class Store:
    """One root's cache. ``files``: ``{relative path: (mtime_ns, size, inode, file id,
    language, segment, offset, head length, counts length, occurrences length[, the names
    a scoped record covers])}``; an entry without a record stops at ``segment``
    (``UNPARSED`` or ``BINARY``)."""

    def __init__(self, env: dict[str, str] | os._Environ, root: str):
        self.root = root
        self.path = root_directory(env, root)
        self.digest = os.path.basename(self.path)
        self.stamp = stamp()
        self.files: dict[str, tuple] = {}
        self.generation = ""
        self.next_fid = 0
        self.dirty = False
        self._shards: dict[int, dict] = {}  # loaded shards of this generation
        self._new_names: dict[int, list[str]] = {}  # fid -> names, parsed this run
        self._absent: dict[str, list[int]] = {}  # name -> fids found without it this run
        self._segment: list[bytes] = []  # this run's blobs, written at save
        self._segment_name = ""
        self._segment_size = 0
        self._handles: dict[str, object] = {}

    # -- reading ------------------------------------------------------------------------

    def load(self) -> dict[str, tuple]:
        data = _load(os.path.join(self.path, "index.marshal"))
        if (
            isinstance(data, dict)
            and data.get("stamp") == self.stamp
            and data.get("root") == self.root
            and isinstance(data.get("files"), dict)
        ):
            self.files = data["files"]
            self.generation = data.get("generation", "")
            self.next_fid = data.get("next_fid", 0)
        return self.files

    def get(self, rel: str, st: os.stat_result) -> tuple | None:
        """The entry when the file's ``stat`` still matches it (nothing is read)."""
        entry = self.files.get(rel)
        if (
            entry is not None
            and entry[0] == st.st_mtime_ns
            and entry[1] == st.st_size
            and entry[2] == st.st_ino
        ):
            return entry
        return None

    def _shard(self, k: int) -> dict:
        if k not in self._shards:
            data = None
            if self.generation:
                data = _load(os.path.join(self.path, f"names-{self.generation}-{k}.marshal"))
            if not isinstance(data, dict) or not {"postings", "absent"} <= set(data):
                data = {"postings": {}, "absent": {}, "missing": bool(self.generation)}
            self._shards[k] = data
        return self._shards[k]

    def holders(self, name: str) -> tuple[set[int], set[int]] | None:
        """``(ids of parsed files holding name, ids of unparsed files known without it)``,
        or None when this generation's shard cannot be read (then nothing is known)."""
        if not self.generation:
            return set(), set()
        shard = self._shard(shard_of(name))
        if shard.get("missing"):
            return None
        return set(shard["postings"].get(name, ())), set(shard["absent"].get(name, ()))

    def _read(self, segment: str, offset: int, length: int) -> bytes:
        handle = self._handles.get(segment)
        if handle is None:
            handle = self._handles[segment] = open(os.path.join(self.path, segment), "rb")  # noqa: SIM115
        if hasattr(os, "pread"):
            blob = os.pread(handle.fileno(), length, offset)  # one call, no seek
        else:
            handle.seek(offset)
            blob = handle.read(length)
        if len(blob) != length:
            raise EOFError(segment)
        return blob

    def blob(self, entry: tuple, which: int) -> bytes | None:
        """A parsed entry's blob ``which`` (``records.HEAD``, ``COUNTS``, ``OCCURRENCES``)
        as stored; None when unreadable."""
        offset = entry[6] + sum(entry[7 : 7 + which])
        try:
            return self._read(entry[5], offset, entry[7 + which])
        except (OSError, EOFError, ValueError, TypeError):
            return None

    def part(self, entry: tuple, which: int):
        """A parsed entry's marshalled blob ``which`` (``records.HEAD``, ``COUNTS``),
        loaded; None when unreadable."""
        blob = self.blob(entry, which)
        try:
            return marshal.loads(blob) if blob is not None else None
        except (EOFError, ValueError, TypeError):
            return None

    def close(self) -> None:
        for handle in self._handles.values():
            with contextlib.suppress(OSError):
                handle.close()
        self._handles.clear()

    # -- writing ------------------------------------------------------------------------

    def _fid(self) -> int:
        self.next_fid += 1
        self.dirty = True
        return self.next_fid

    def put_record(
        self,
        rel: str,
        st: os.stat_result,
        language: str,
        blobs: tuple[bytes, ...],
        names,
        covers: tuple | None = None,
    ) -> None:
        """``blobs``: the record's head, counts and occurrences, marshalled; ``names``:
        those it holds rows of; ``covers``: a scoped record's names (None: a whole one)."""
        if not self._segment_name:
            self._segment_name = f"seg-{_token()}.marshal"
        fid = self._fid()
        self.files[rel] = (
            st.st_mtime_ns,
            st.st_size,
            st.st_ino,
            fid,
            language,
            self._segment_name,
            self._segment_size,
            *(len(blob) for blob in blobs),
            *(() if covers is None else (tuple(covers),)),
        )
        self._segment.extend(blobs)
        self._segment_size += sum(len(blob) for blob in blobs)
        self._new_names[fid] = list(names)

    def put_binary(self, rel: str, st: os.stat_result, language: str) -> None:
        self.files[rel] = (st.st_mtime_ns, st.st_size, st.st_ino, self._fid(), language, BINARY)

    def put_absent(self, rel: str, st: os.stat_result, language: str, name: str) -> None:
        """Read, found without ``name``, not parsed (a scoped record of other names is
        kept: it still answers for them)."""
        entry = self.get(rel, st)
        if entry is None or (entry[5] != UNPARSED and len(entry) <= COVERS):
            entry = (st.st_mtime_ns, st.st_size, st.st_ino, self._fid(), language, UNPARSED)
            self.files[rel] = entry
        self._absent.setdefault(name, []).append(entry[3])
        self.dirty = True

    def forget(self, rels) -> None:
        for rel in rels:
            if self.files.pop(rel, None) is not None:
                self.dirty = True

    def save(self) -> bool:
        """Write this run's records, the names and then the index; a cache that cannot be
        written is no error."""
        if not self.dirty:
            self.close()
            return False
        try:
            os.makedirs(self.path, exist_ok=True)
            if self._segment:
                segment = os.path.join(self.path, self._segment_name)
                write_atomic(segment, b"".join(self._segment))
            self._compact_if_worth_it()
            generation = _token()[:12]
            self._write_names(generation)
            index = {
                "stamp": self.stamp,
                "root": self.root,
                "generation": generation,
                "next_fid": self.next_fid,
                "files": self.files,
            }
            write_atomic(os.path.join(self.path, "index.marshal"), marshal.dumps(index))
        except OSError:
            self.close()
            return False
        old, self.generation = self.generation, generation
        self.close()
        self._remove_unreferenced(old)
        self.dirty = False
        self._segment, self._segment_name, self._segment_size = [], "", 0
        self._new_names, self._absent = {}, {}
        return True

    def _write_names(self, generation: str) -> None:
        current = {entry[3] for entry in self.files.values()}
        by_shard: dict[int, dict[str, list[int]]] = {}
        for fid, names in self._new_names.items():
            if fid in current:
                for name in names:
                    by_shard.setdefault(shard_of(name), {}).setdefault(name, []).append(fid)
        for k in range(SHARDS):
            shard = self._shard(k)
            postings: dict[str, list[int]] = {}
            for name, fids in shard["postings"].items():
                kept = [f for f in fids if f in current]
                if kept:
                    postings[name] = kept
            for name, fids in by_shard.get(k, {}).items():
                postings.setdefault(name, []).extend(fids)
            absent: dict[str, list[int]] = {}
            for name, fids in shard["absent"].items():
                kept = [f for f in fids if f in current]
                if kept and name not in self._absent:
                    absent[name] = kept
            for name, fids in self._absent.items():
                if shard_of(name) == k:
                    old = shard["absent"].get(name, ())
                    absent[name] = sorted({f for f in (*old, *fids) if f in current})
            # the last ABSENT_NAMES names asked, overall: about that many per shard
            while len(absent) > max(1, ABSENT_NAMES // SHARDS):
                del absent[next(iter(absent))]
            self._shards[k] = {"postings": postings, "absent": absent}
            write_atomic(
                os.path.join(self.path, f"names-{generation}-{k}.marshal"),
                marshal.dumps(self._shards[k]),
            )

    def _compact_if_worth_it(self) -> None:
        live: dict[str, int] = {}
        for entry in self.files.values():
            if len(entry) > 6:
                live[entry[5]] = live.get(entry[5], 0) + sum(entry[7:COVERS])
        sizes = {}
        for name in self._names("seg-"):
            with contextlib.suppress(OSError):
                sizes[name] = os.stat(os.path.join(self.path, name)).st_size
        live_bytes = sum(live.values())
        dead = sum(sizes.get(s, 0) for s in sizes) - live_bytes
        if dead <= max(live_bytes, COMPACT_BYTES):
            return
        name = f"seg-{_token()}.marshal"
        blobs: list[bytes] = []
        offset = 0
        moved = {}
        contents: dict[str, bytes | None] = {}
        for rel, entry in self.files.items():
            if len(entry) <= 6:
                continue
            if entry[5] not in contents:
                try:
                    contents[entry[5]] = read_bytes(os.path.join(self.path, entry[5]))
                except OSError:
                    contents[entry[5]] = None
            data, size = contents[entry[5]], sum(entry[7:COVERS])
            if data is None or entry[6] + size > len(data):
                continue  # unreadable: dropped, parsed again next time
            blobs.append(data[entry[6] : entry[6] + size])
            moved[rel] = (*entry[:5], name, offset, *entry[7:])
            offset += size
        write_atomic(os.path.join(self.path, name), b"".join(blobs))
        for rel in [r for r, e in self.files.items() if len(e) > 6 and r not in moved]:
            del self.files[rel]
        self.files.update(moved)

    def _remove_unreferenced(self, old_generation: str) -> None:
        referenced = {entry[5] for entry in self.files.values() if len(entry) > 6}
        for name in self._names("seg-"):
            if name not in referenced:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.path, name))
        for name in self._names("names-"):
            if not name.startswith(f"names-{self.generation}-"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(self.path, name))
        # format 1: one file per root
        legacy = os.path.join(os.path.dirname(self.path), f"{self.digest}.marshal")
        with contextlib.suppress(OSError):
            os.unlink(legacy)

    def _names(self, prefix: str) -> list[str]:
        """The cache files ``prefix*.marshal`` of this root (pathlib's glob, without it)."""
        try:
            names = os.listdir(self.path)
        except OSError:
            return []
        return sorted(n for n in names if n.startswith(prefix) and n.endswith(".marshal"))
