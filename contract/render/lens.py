"""The code lens over the caller's own tree: ``relore map``, ``defs``, ``refs``.

The tree is retrieved text like a clone: its paths and names are fenced, its source lines
were quoted ``>`` before the envelope's scrub (``cli._lens_page``)."""

from __future__ import annotations

from relore.contract.render.marks import _f, _marked, _plural


def _files_line(files: dict) -> str:
    parts = [f"{_plural(files['source_files'], 'source file')} ({files['listing']})"]
    if files.get("without_name"):
        parts.append(f"{files['without_name']} without the name (not parsed)")
    if files.get("without_definition"):
        parts.append(f"{files['without_definition']} using it but defining none (not parsed)")
    parts.append(f"{files['parsed']} parsed, {files['from_cache']} from cache")
    if files["syntax_errors"]:
        parts.append(
            f"{_plural(files['syntax_errors'], 'file')} with syntax errors read with recovery "
            "(a definition after the error may be missing)"
        )
    if files.get("tangled_errors"):
        parts.append(
            f"{_plural(files['tangled_errors'], 'file')} not read: a syntax error holding "
            "hundreds of bare tokens in a row (generated or hostile)"
        )
    if files["skipped_large"]:
        parts.append(f"{files['skipped_large']} skipped as over {files['max_file_bytes']:,} bytes")
    if files["skipped_binary"]:
        parts.append(f"{files['skipped_binary']} skipped as binary")
    for language, n in files["no_grammar"].items():
        parts.append(f"{n} {language} not read: no grammar (pip install 'relore[code]')")
    if files["skipped_dirs"]:
        parts.append(
            f"{_plural(files['skipped_dirs'], 'directory')} skipped "
            f"(e.g. {', '.join(_f(d) for d in files['skipped_dir_examples'][:3])})"
        )
    return "files: " + "; ".join(parts)


def _left_out(page: dict, narrow: str) -> str | None:
    if not page["left_out"]:
        return None
    return (
        f"{page['left_out']} more not shown: pass --offset {page['offset'] + page['returned']}"
        f"{narrow}"
    )


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def defs_page(page: dict) -> str:
    head = f"defs {page['name']!r} in {_f(page['path'])}: {page['returned']} of {page['total']}"
    if page["kinds"]:
        head += f" ({_counts(page['kinds'])})"
    lines = [head]
    if page["offset"]:
        lines.append(f"starting after the first {page['skipped_before']}")
    if not page["total"]:
        lines.append(f"no definition named {page['name']!r} (try `relore refs {page['name']}`)")
    for row in page["definitions"]:
        mark = "  [file has syntax errors]" if row["syntax_errors_in_file"] else ""
        lines.append(
            f"{_f(row['path'])}:{row['line']}  {row['kind']}  {_f(row['qualified'])}{mark}"
        )
        lines.extend(_marked(row["text"]))
    more = _left_out(page, ", or narrow the path")
    if more:
        lines.append(more)
    lines.append(_files_line(page["files"]))
    return "\n".join(lines)


def refs_page(page: dict) -> str:
    head = f"refs {page['name']!r} in {_f(page['path'])}"
    if page["kind"]:
        head += f" [kind={page['kind']}]"
    head += f": {page['returned']} of {page['total']}"
    lines = [head + f" — {_plural(page['occurrences'], 'occurrence')}: {_counts(page['counts'])}"]
    if page["offset"]:
        lines.append(f"starting after the first {page['skipped_before']}")
    if not page["total"]:
        lines.append(f"no occurrence of {page['name']!r} as an identifier")
    for row in page["references"]:
        scope = f"  in {_f(row['scope'])}" if row["scope"] else ""
        mark = "  [file has syntax errors]" if row["syntax_errors_in_file"] else ""
        lines.append(f"{_f(row['path'])}:{row['line']}:{row['column']}  {row['kind']}{scope}{mark}")
        lines.extend(_marked(row["text"]))
    more = _left_out(page, ", or narrow with --kind / a path")
    if more:
        lines.append(more)
    lines.append(_files_line(page["files"]))
    return "\n".join(lines)


def map_page(page: dict) -> str:
    dunders, everywhere = page["dunders_excluded"], page["everywhere_excluded"]
    head = (
        f"map {_f(page['path'])}: {page['returned']} of {page['total']} defined names, "
        f"ranked by {page['score']}"
    )
    if page["focus"]:
        head += "; seen from " + ", ".join(_f(f) for f in page["focus"])
    elif page["entry_files"]:
        head += "; half the walk starts at " + ", ".join(_f(f) for f in page["entry_files"])
    lines = [
        head,
        f"left out: dunders ({_plural(dunders['definitions'], 'definition')} of "
        f"{_plural(dunders['names'], 'name')}); names defined in more than "
        f"{everywhere['more_files_than']} files ({_plural(everywhere['definitions'], 'definition')}"
        f" of {_plural(everywhere['names'], 'name')})",
    ]
    declared = page.get("declared") or {}
    if declared.get("names"):
        lines.append(
            f"declared public ({_plural(declared['names'], 'name')} in "
            f"{_plural(declared['files'], 'file')}: __all__, package re-exports): each weighs "
            "as its users' references"
        )
    documentation = page.get("documentation") or {}
    if documentation.get("names"):
        read = [_f(d) for d in documentation["documents"]]
        if documentation.get("sources"):
            read.append(f"the docstrings of {_plural(documentation['sources'], 'source file')}")
        lines.append(
            f"documentation's examples ({_plural(documentation['blocks'], 'block')} in "
            + ", ".join(read)
            + (", cut at its bounds" if documentation["cut"] else "")
            + f") use {_plural(documentation['names'], 'name')}: read as one more user's file"
        )
    if page["offset"]:
        lines.append(f"starting after the first {page['skipped_before']}")
    if not page["total"]:
        lines.append("no definitions found")
    width = len(str(page["offset"] + page["returned"]))
    for i, entry in enumerate(page["entries"], page["offset"] + 1):
        shares = _plural(entry["definitions"], "definition")
        where = ", ".join(
            f"{_f(loc['qualified'])} {_f(loc['path'])}:{loc['line']}" for loc in entry["locations"]
        )
        rest = entry["definitions"] - len(entry["locations"])
        if rest:
            where += f", +{rest} more"
        used = f"used in {_plural(entry['referenced_from'], 'file')}"
        if entry.get("documented"):
            used += f" and {entry['documented']}× in the documentation"
        lines.append(
            f"{i:>{width}}. {entry['score']:>8g}  {_f(entry['name'])}  "
            f"({used}; {shares}: {_counts(entry['kinds'])})  {where}"
        )
    more = _left_out(page, ", or map a narrower path")
    if more:
        lines.append(more)
    lines.append(_files_line(page["files"]))
    return "\n".join(lines)
