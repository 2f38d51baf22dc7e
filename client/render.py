"""The one renderer: dicts from the daemon in, text out. Stdlib only.

Retrieved prose is somebody else's words: every line of it is prefixed with ``>`` so an
unmarked line is always ours (counts, trust tiers, dates, URLs).
"""

from __future__ import annotations


def quote(text: str | None) -> list[str]:
    if not text:
        return []
    return ["> " + line if line else ">" for line in text.replace("\r", "").split("\n")]


def enveloped(page: dict, text: str, *, compact: bool = False) -> str:
    """The daemon's envelope around a rendered page: its delimiters always, its one-line
    notice unless ``compact``. The marks inside are what matter; the notice explains them."""
    envelope = page.get("envelope")
    if not envelope:
        return text
    head = [envelope["begin"]] + ([] if compact else [envelope["notice"]])
    return "\n".join([*head, text, envelope["end"]])


def _state(hit: dict) -> str:
    return f"{hit['kind']} {hit['state']}"


def search_page(page: dict) -> str:
    lines: list[str] = []
    filters = ", ".join(f"{k}={v}" for k, v in page.get("filters", {}).items())
    head = f"search {page['query']!r}"
    if filters:
        head += f" [{filters}]"
    head += f": {page['returned']} of {page['total']}"
    if page.get("matches", 0) > page["total"]:
        head += (
            f" ({page['matches']} matching documents, at most {page['per_thread_cap']} per thread)"
        )
    lines.append(head)
    if page.get("widened"):
        lines.append(
            "widened: no document carries every term; showing documents ranked by how many "
            "of the terms they carry"
        )
    if not page["hits"]:
        lines.append("no matches" + (f" with filters {filters}" if filters else ""))
    for i, hit in enumerate(page["hits"], 1):
        lines.append("")
        lines.append(f"{i}. {hit['repo']}#{hit['number']} {_state(hit)} — {hit['title']}".rstrip())
        lines.append(
            f"   {hit['document_kind']} by {hit['author']} [{hit['trust']}] "
            f"{hit['age']} ({hit['date']})  {hit['url']}"
        )
        # the daemon already marked every retrieved line with '>'
        lines.extend("   " + q for q in (hit.get("snippet") or "").split("\n") if q)
    return "\n".join(lines)


def status_page(page: dict) -> str:
    lines = [f"relore {page['version']} on {page['engine']}: {page['total']} repositories"]
    for repo in page["repos"]:
        trust = repo["trust"]
        lines.append(
            f"{repo['repo']}: {repo['threads']} threads ({repo['issues']} issues, "
            f"{repo['prs']} PRs), {repo['documents']} documents "
            f"(authoritative {trust['authoritative']}, reported {trust['reported']}, "
            f"machine {trust['machine']})"
        )
        for mark in repo["passes"]:
            lines.append(f"  {mark['pass']}: high-water {mark['high_water'] or '-'}")
        lines.append(f"  last landed {repo['last_loaded_at'] or '-'}")
    if not page["repos"]:
        lines.append("nothing indexed yet: run `relored extract --repo o/n` then `dbt build`")
    return "\n".join(lines)


# --- code lens: map / defs / refs over the caller's own tree ------------------------------
# Source lines are the tree's words, not ours: quoted with ``>`` like any retrieved text.


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _files_line(files: dict) -> str:
    parts = [f"{_plural(files['source_files'], 'source file')} ({files['listing']})"]
    if files.get("without_name"):
        parts.append(f"{files['without_name']} without the name (not parsed)")
    parts.append(f"{files['parsed']} parsed, {files['from_cache']} from cache")
    if files["syntax_errors"]:
        parts.append(
            f"{_plural(files['syntax_errors'], 'file')} with syntax errors read with recovery "
            "(a definition after the error may be missing)"
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
            f"(e.g. {', '.join(files['skipped_dir_examples'][:3])})"
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
    head = f"defs {page['name']!r} in {page['path']}: {page['returned']} of {page['total']}"
    if page["kinds"]:
        head += f" ({_counts(page['kinds'])})"
    lines = [head]
    if page["offset"]:
        lines.append(f"starting after the first {page['skipped_before']}")
    if not page["total"]:
        lines.append(f"no definition named {page['name']!r} (try `relore refs {page['name']}`)")
    for row in page["definitions"]:
        mark = "  [file has syntax errors]" if row["syntax_errors_in_file"] else ""
        lines.append(f"{row['path']}:{row['line']}  {row['kind']}  {row['qualified']}{mark}")
        lines.extend("    " + q for q in quote(row["text"]))
    more = _left_out(page, ", or narrow the path")
    if more:
        lines.append(more)
    lines.append(_files_line(page["files"]))
    return "\n".join(lines)


def refs_page(page: dict) -> str:
    head = f"refs {page['name']!r} in {page['path']}"
    if page["kind"]:
        head += f" [kind={page['kind']}]"
    head += f": {page['returned']} of {page['total']}"
    lines = [head + f" — {_plural(page['occurrences'], 'occurrence')}: {_counts(page['counts'])}"]
    if page["offset"]:
        lines.append(f"starting after the first {page['skipped_before']}")
    if not page["total"]:
        lines.append(f"no occurrence of {page['name']!r} as an identifier")
    for row in page["references"]:
        scope = f"  in {row['scope']}" if row["scope"] else ""
        mark = "  [file has syntax errors]" if row["syntax_errors_in_file"] else ""
        lines.append(f"{row['path']}:{row['line']}:{row['column']}  {row['kind']}{scope}{mark}")
        lines.extend("    " + q for q in quote(row["text"]))
    more = _left_out(page, ", or narrow with --kind / a path")
    if more:
        lines.append(more)
    lines.append(_files_line(page["files"]))
    return "\n".join(lines)


def map_page(page: dict) -> str:
    dunders = page["dunders_excluded"]
    lines = [
        f"map {page['path']}: {page['returned']} of {page['total']} defined names, "
        f"ranked by {page['score']}; dunders excluded: "
        f"{_plural(dunders['definitions'], 'definition')} of {_plural(dunders['names'], 'name')}"
    ]
    if page["offset"]:
        lines.append(f"starting after the first {page['skipped_before']}")
    if not page["total"]:
        lines.append("no definitions found")
    width = len(str(page["offset"] + page["returned"]))
    for i, entry in enumerate(page["entries"], page["offset"] + 1):
        shares = _plural(entry["definitions"], "definition")
        where = ", ".join(
            f"{loc['qualified']} {loc['path']}:{loc['line']}" for loc in entry["locations"]
        )
        rest = entry["definitions"] - len(entry["locations"])
        if rest:
            where += f", +{rest} more"
        lines.append(
            f"{i:>{width}}. {entry['score']:>8g}  {entry['name']}  "
            f"({entry['occurrences']} / {shares}; {_counts(entry['kinds'])})  {where}"
        )
    more = _left_out(page, ", or map a narrower path")
    if more:
        lines.append(more)
    lines.append(_files_line(page["files"]))
    return "\n".join(lines)
