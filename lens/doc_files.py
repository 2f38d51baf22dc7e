"""Where a tree's documentation is, and reading it bounded: the mapped directory's
``README*`` and ``docs/`` pages, the repository root's README, an installed distribution's
``METADATA`` description; each document as ``(path, text, form, cut)``. Regular files
only, never through a symbolic link, never blocking."""

from __future__ import annotations

import os
import re
import time

from relore.lens.confine import read_regular
from relore.lens.listing import RACY_NS

# documents read (READMEs, docs pages, one distribution's METADATA)
MAX_DOCUMENTS = 64
# bytes read of one document; the rest is not looked at
MAX_DOCUMENT_BYTES = 1 << 20
# directory entries looked at: in each docs directory walked, and in site-packages
MAX_ENTRIES = 8192
# docs/ is walked this deep, through at most this many directories
MAX_DEPTH = 3
MAX_DIRECTORIES = 256


# bytes of the distributions' RECORD files read while looking for the one owning the tree
MAX_RECORD_BYTES = 16 << 20

DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", "")
DOCS_DIRS = ("docs", "doc")


# a document's form: a Markdown page, a reST (or plain text) one, a source file's docstrings
MARKDOWN, REST, SOURCE = "markdown", "rest", "source"


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
