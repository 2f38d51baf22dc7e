"""The one renderer: dicts from the daemon in, text out. Stdlib only.

Retrieved prose is somebody else's words: every line of it is prefixed with ``>`` so an
unmarked line is always ours (counts, trust tiers, dates, URLs). A single-line retrieved
value on one of our lines (a title, a login, a path) sits inside ``⟦ ⟧``. The daemon has
sanitised every string already (``relore.contract.sanitize``), and the local code lens's
pages pass the same envelope (``cli.py``); this module never splits, cleans or flattens
text by a rule of its own: a quoted field is read back with ``sanitize.quoted_lines`` and a
fenced value flattened with ``sanitize.flat`` — so a page prints the same whether or not it
passed the scrub.
"""

from __future__ import annotations

from relore.contract import sanitize


def _marked(text: str | None, indent: str = "    ") -> list[str]:
    """A field the daemon quoted (every line already marked ``>``), indented."""
    return [indent + q for q in sanitize.quoted_lines(text)]


def _f(value) -> str:
    """A retrieved single-line value, fenced (``?`` when there is none). Flattened here too,
    so a page prints the same before and after the scrub."""
    return sanitize.fence(sanitize.flat(str(value))) if value not in (None, "") else "?"


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


def _notices(page: dict, place: str) -> list[str]:
    """The sentences the daemon put on the page for ``place`` (``serve/notices.py`` words
    them; this renderer and the page at ``/`` print them verbatim, never a wording of
    their own)."""
    return [n["text"] for n in page.get("notices") or () if n.get("place") == place]


def _qualified(line: str, page: dict, place: str) -> str:
    """A line of ours with the notices that qualify it, each in parentheses."""
    return "".join([line, *(f" ({text})" for text in _notices(page, place))])


def search_page(page: dict) -> str:
    filters = ", ".join(f"{k}={v}" for k, v in page.get("filters", {}).items())
    shown = " ".join(sanitize.flat(page["query"]).split())
    head = f"search {shown[:80] + '…' if len(shown) > 80 else shown!r}"
    if filters:
        head += f" [{filters}]"
    counted = f" {page['counted']}" if page.get("counted") else ""
    total = f"{page['total']}" + ("+" if page.get("total_is_lower_bound") else "")
    lines = [_qualified(f"{head}: {page['returned']} of {total}{counted}", page, "count")]
    lines.extend(_notices(page, "before"))
    for i, hit in enumerate(page["hits"], 1):
        lines.append("")
        lines.append(f"{i}. {hit['repo']}#{hit['number']} {_state(hit)} — {_f(hit['title'])}")
        lines.append(
            f"   {hit['document_kind']} by {_f(hit['author'])} [{hit['trust']}] "
            f"{hit['age']} ({hit['date']})  {hit['url']}"
            + (f"  ({hit['partial']})" if hit.get("partial") else "")
            + (f"  ({hit['meaning']})" if hit.get("meaning") else "")
            + ("  (touched a file the query names)" if "file" in hit.get("matched_by", ()) else "")
        )
        # the daemon already marked every retrieved line with '>'
        lines.extend(_marked(hit.get("snippet"), "   "))
    lines.extend(_notices(page, "after"))
    return "\n".join(lines)


def precedent_page(page: dict) -> str:
    shown = " ".join(sanitize.flat(page["query"]).split())
    head = f"precedent {shown[:80] + '…' if len(shown) > 80 else shown!r}"
    named = page.get("named") or {}
    if named.get("files") or named.get("symbols"):
        head += (
            " ["
            + ", ".join(
                f"{k}={' '.join(_f(v) for v in named[k])}"
                for k in ("files", "symbols")
                if named.get(k)
            )
            + "]"
        )
    total = f"{page['total']}" + ("+" if page.get("total_is_lower_bound") else "")
    count = (
        f"{head} in {page['repo']}: {page['returned']} of {total} {page['counted']} "
        f"({page['merged']} merged; {page['order']})"
    )
    lines = [_qualified(count, page, "count")]
    lines.extend(_notices(page, "before"))
    for i, hit in enumerate(page["hits"], 1):
        merged = f", merged {hit['merged_date']}" if hit.get("merged_date") else ""
        ended = "merged" if hit["merged"] else "closed without merging"
        lines.append("")
        lines.append(f"{i}. {hit['repo']}#{hit['number']} pr {ended} — {_f(hit['title'])}")
        lines.append(
            f"   by {_f(hit['author'])} [{hit['trust'] or '?'}] {hit['age']} ({hit['date']}"
            f"{merged})  {hit['url']}"
        )
        why = hit["why"]
        because = [f"   matched: {hit['matched']}"]
        if why.get("terms"):
            because.append(f"terms {_f(' '.join(why['terms']))}")
        for key in ("files", "symbols"):
            if why.get(key):
                because.append(f"{key} " + " ".join(_f(v) for v in why[key]))
        lines.append(" — ".join(because))
        lines.extend(_marked(hit.get("snippet"), "   "))
        files = hit["files"]
        listed = ", ".join(
            f"{p['change'] or '?'} {_f(p['path'])}" + (" (named)" if p["named"] else "")
            for p in files["paths"]
        )
        lines.append(
            f"   files: {files['returned']} of {files['total']} changed"
            + (f": {listed}" if listed else "")
        )
        reviews = hit["reviews"]
        lines.append(f"   review comments: {reviews['returned']} of {reviews['total']}")
        for c in reviews["comments"]:
            where = f" on {_f(c['path'])}:{c.get('line') or '?'}" if c.get("path") else ""
            lines.append(
                f"     [{c['id']}] {c['kind']}{where} by {_f(c['author'])} [{c['trust']}] "
                f"{c['date']}"
            )
            lines.extend(_marked(c.get("text"), "       "))
    lines.extend(_notices(page, "after"))
    return "\n".join(lines)


def _replica_line(where: dict) -> str:
    """A daemon reading a hot standby: how far behind its primary the answers may be."""
    lag = where.get("replay_lag_s")
    last = where.get("last_replayed_at") or "never"
    if not where.get("receiving"):
        said = f"not streaming from its primary; last replayed {last}"
    elif lag is None:
        said = "streaming, nothing replayed yet"
    elif lag == 0:
        said = f"streaming, caught up (last replayed {last})"
    else:
        said = f"streaming, {lag:g} s behind its primary (last replayed {last})"
    head = "BEHIND: " if where.get("behind") else ""
    return f"{head}reading a hot standby: {said}"


def status_page(page: dict) -> str:
    lines = [
        f"relore {page['version']} on {page['engine']}: {_plural(page['total'], 'repository')}"
    ]
    where = page.get("replica") or {}
    if where.get("standby"):
        lines.append(_replica_line(where))
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
        deletions = repo.get("deletions") or {}
        if "deletions" in repo:
            lines.append(
                f"  deletions: last checked {deletions['checked_at']} ({deletions['age']})"
                if deletions.get("checked_at")
                else "  deletions: never checked (the next `relored extract` does)"
            )
        index = repo.get("search_index")
        if index:
            lines.append(
                "  search index: "
                + {
                    "current": f"current ({index.get('documents', 0):,} documents, refreshed "
                    f"{index.get('refreshed_at')})",
                    "behind": "behind the marts (the next search refreshes it; or `relored index`)",
                }.get(index["state"], "not built (the first search builds it; or `relored index`)")
            )
        semantic = repo.get("semantic")
        if semantic:
            lines.append(
                "  semantic tier: "
                + (
                    f"on ({semantic['embedded']:,} of {semantic['passages']:,} passages "
                    f"embedded, last {semantic['embedded_at']})"
                    if semantic["state"] == "on"
                    else f"off ({semantic['reason']})"
                )
            )
        for pass_name, floor in sorted(repo.get("sample_floors", {}).items()):
            lines.append(f"  {pass_name}: sampled from {floor} (nothing older is indexed)")
        authority = repo.get("authority") or {}
        if authority.get("resolved"):
            lines.append(
                f"  authority: {authority['logins']} authors asked, {authority['with_write']} "
                f"with write access ({authority['resolved_at']})"
            )
        elif authority:
            lines.append(
                "  authority: never resolved — MEMBER authors count as reported; "
                f"run `relored extract authority --repo {repo['repo']}`"
            )
        signals = repo.get("signals") or {}
        if signals:
            lines.append(
                "  signals: "
                + ", ".join(f"{k.removeprefix('thread_')} {v}" for k, v in signals.items())
            )
        if repo.get("orphan_comments"):
            lines.append(
                f"  {repo['orphan_comments']} comments whose thread never arrived (not indexed)"
            )
        lines.append(
            f"  last landed {repo['last_loaded_at'] or '-'}, last built {repo.get('last_built_at') or '-'}"
        )
    if not page["repos"]:
        lines.append("nothing indexed yet: run `relored extract --repo o/n` then `dbt build`")
    return "\n".join(lines)


def rules_page(page: dict) -> str:
    """``relore rules``: the rules sent (text quoted), what was held back, the other titles."""
    held = page["held_back"]
    sections = f"; sections: {', '.join(page['sections'])}" if page["sections"] else ""
    lines = [f"Rules for {page['repo']} (follow before writing code{sections})"]
    how = {"ranked": "chosen for your task"}.get(page["mode"], "every eligible rule")
    lines.append(
        f"{page['returned']} of {page['eligible']} eligible rule(s) sent, {how}; "
        f"~{page['tokens']} tokens"
        + (f" (cap {page['max_tokens']})" if page.get("max_tokens") else "")
    )
    for rule in page["rules"]:
        pin = " (always)" if rule["always"] else ""
        lines.append(f"- [{rule['level']}] {rule['id']} {_f(rule['title'])}{pin}")
        # the daemon already marked every line of the rule's text with '>'
        lines.extend(_marked(rule.get("text"), "  "))
    others = page["others"]
    if others:
        lines.append(
            f"{page['others_total']} other rule(s) cover these files but were not sent. If one "
            "of these titles matters for your change, run `relore rules` again with "
            "`--include ID`:"
        )
        for other in others:
            lines.append(f"- {other['id']} {_f(other['title'])}")
        rest = page["others_total"] - len(others) - page["others_listed_earlier"]
        if rest > 0:
            lines.append(f"  … and {rest} more, listed on a later call")
    if page["others_listed_earlier"]:
        lines.append(
            f"{page['others_listed_earlier']} other eligible rule(s) were listed earlier in "
            "this session"
        )
    counts = [
        f"{n} {label}"
        for label, n in (
            ("already sent in this session", held["already_sent"]),
            ("not chosen for the task", held["not_chosen"]),
            ("over the token cap", held["over_cap"]),
            ("with hidden characters (never served)", held["hidden_characters"]),
        )
        if n
    ]
    if counts:
        lines.append("held back: " + ", ".join(counts))
    lines.extend(f"note: {note}" for note in page["notes"])
    return "\n".join(lines)


# --- code lens: map / defs / refs over the caller's own tree ------------------------------
# The tree is retrieved text like a clone: its paths and names are fenced, its source lines
# were quoted ``>`` before the envelope's scrub (``cli._lens_page``).


def _plural(n: int, word: str) -> str:
    """``1 file``, ``2 files``; a word ending in a consonant and y takes -ies."""
    if n == 1:
        return f"{n} {word}"
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return f"{n} {word[:-1]}ies"
    return f"{n} {word}s"


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


def _thread_head(head: dict) -> str:
    by = f"{_f(head['author'])} [{head['trust'] or '?'}]" if head.get("author") else "?"
    return (
        f"{head['repo']}#{head['number']} {head['kind']} {head['state']} — {_f(head['title'])}\n"
        f"opened by {by} {head['age']} ({head['date']})  {head['url']}"
    )


def _comment_lines(comment: dict) -> list[str]:
    where = f" on {_f(comment['path'])}:{comment.get('line') or '?'}" if comment.get("path") else ""
    lines = [
        f"[{comment['id']}] {comment['kind']}{where} by {_f(comment['author'])} "
        f"[{comment['trust']}] {comment['age']} ({comment['date']})"
    ]
    lines.extend(_marked(comment.get("text"), "  "))
    if comment.get("body_chars"):
        lines.append(
            f"  (cut from {comment['body_chars']:,} chars; whole with --comment {comment['id']})"
        )
    return lines


def _titled(head: str, page: dict) -> str:
    """The thread's own lines, the first qualified by the page's ``title`` notices."""
    first, *rest = head.split("\n")
    return "\n".join([_qualified(first, page, "title"), *rest])


def thread_page(page: dict) -> str:
    lines = [_titled(_thread_head(page["thread"]), page)]
    mode = page["mode"]
    if mode == "full":
        lines.append(_qualified(f"opening post, {page['body_chars']} chars:", page, "count"))
        lines.extend(_notices(page, "before"))
        lines.extend(sanitize.quoted_lines(page.get("opening_post") or ">"))
    elif mode == "files":
        count = f"changed files: {page['returned']} of {page['total']} listed"
        lines.append(_qualified(count, page, "count"))
        lines.extend(_notices(page, "before"))
        lines.extend(f"  {f['change'] or '?'} {_f(f['path'])}" for f in page["files"])
    elif mode == "outline":
        count = f"outline: {page['returned']} of {page['total']} comments"
        lines.append(_qualified(count, page, "count"))
        lines.extend(_notices(page, "before"))
        for row in page["outline"]:
            lines.append(
                f"[{row['id']}] {_f(row['author'])} [{row['trust']}] {row['date']} {_f(row['line'])}"
            )
    else:
        if "opening_post" in page:  # a thread's first page leads with what the thread is
            whole = page.get("opening_post_chars")
            cut = f" (cut from {whole:,} chars; whole with --full)" if whole else ""
            if page["opening_post"]:
                lines.append(f"opening post{cut}:")
                lines.extend(sanitize.quoted_lines(page["opening_post"]))
            else:  # GitHub keeps an issue opened without a description as a null body
                lines.append("opening post: (no text)")
            lines.append("")
        selection = f" ({page['selection']})" if page.get("selection") else ""
        count = f"comments: {page['returned']} of {page['total']}{selection}"
        lines.append(_qualified(count, page, "count"))
        lines.extend(_notices(page, "before"))
        for comment in page.get("comments", []):
            lines.append("")
            lines.extend(_comment_lines(comment))
    lines.extend(_notices(page, "after"))
    return "\n".join(lines)


INFLIGHT_CLAIMS = {
    "open": "open: someone is on it",
    "merged": "merged",
    "abandoned": "abandoned: closed without merging (tried before; read why)",
}


def inflight_page(page: dict) -> str:
    head = page["thread"]
    if head.get("indexed") is False:
        lines = [_qualified(f"{head['repo']}#{head['number']}", page, "title")]
    else:
        lines = [_titled(_thread_head(head), page)]
    total = page.get("total", page["returned"])
    shown = f"{page['returned']} of {total}" if total != page["returned"] else f"{total}"
    lines.append(_qualified(f"pull requests claiming to close it: {shown}", page, "count"))
    # the page's list is indented under its count line: so are the notices about it
    lines.extend("  " + text for text in _notices(page, "before"))
    claim = None
    for pr in page["pulls"]:
        if pr.get("claim") != claim:
            claim = pr.get("claim")
            lines.append(f"  {INFLIGHT_CLAIMS.get(claim, claim)} ({page['claims'][claim]}):")
        lines.append(
            f"    {pr['repo']}#{pr['number']} {pr['state']}, opened by {_f(pr['author'])} "
            f"[{pr['trust'] or '?'}], updated {pr['age']} ({pr['date']}) — {_f(pr['title'])}  "
            f"{pr['url']}"
        )
    lines.extend("  " + text for text in _notices(page, "after"))
    return "\n".join(lines)


# --- answers from the daemon's working clone: why / symbol / grep / copies -----------------
# The daemon has already marked every line of source or comment text with '>'.


def _budget_line(budget: dict | None) -> str | None:
    if not budget:
        return None
    line = (
        f"budget: {budget['subprocesses']} git "
        f"{'process' if budget['subprocesses'] == 1 else 'processes'}, "
        f"{budget['history_walks']} history walks "
        f"({budget['pickaxe_walks']} pickaxe of at most {budget['max_pickaxe_walks']}), "
        f"{budget['elapsed_ms']} ms"
    )
    if budget.get("timed_out"):
        line += "; cut: " + "; ".join(budget["timed_out"])
    return line


def _commit_line(row: dict) -> str:
    pull = row.get("pull_request")
    carried = f"  [#{pull['number']} {pull['state']}]" if pull else ""
    return f"  {row['short']} {row['date']} {_f(row['author'])} — {_f(row['subject'])}{carried}"


def why_page(page: dict) -> str:
    lines = [f"why {page['path']}:{page['line']} in {page['repo']} at {page['head'][:12]}"]
    lines.extend(_marked(page.get("text"), "  "))
    blame = page["blame"]
    lines.append(
        f"blame: {blame['short']} by {_f(blame['author'])} {blame['age']} ({blame['date']}) — "
        f"{_f(blame['subject'])}"
    )
    if blame.get("filename") and (
        blame["filename"] != page["path"] or blame["original_line"] != page["line"]
    ):
        lines.append(f"  (in that commit: {_f(blame['filename'])}:{blame['original_line']})")
    if page.get("aliases"):
        lines.append(f"also known as: {', '.join(_f(a) for a in page['aliases'])}")
    pull = page.get("pull_request")
    if pull:
        lines.append(
            f"pull request: {page['repo']}#{pull['number']} {pull['state']} — {_f(pull['title'])}"
        )
        lines.append(
            f"  by {_f(pull['author'])} [{pull['trust'] or '?'}] {pull['age']} ({pull['date']})  "
            f"{pull['url']}  (via {pull['via']})"
        )
    else:
        lines.append(f"pull request: none — {page.get('pull_request_note', '')}")
    comments = page.get("review_comments")
    if comments is not None:
        lines.append(
            f"review comments within {comments['window']} lines: {comments['returned']} of "
            f"{comments['total']} ({comments['on_file']} on the file in that pull request)"
        )
        for comment in comments["comments"]:
            lines.append(
                f"  [{comment['id']}] {_f(comment['author'])} [{comment['trust']}] "
                f"{comment['age']} ({comment['date']}) on {_f(comment['path'])}:{comment['line']}"
                f"  {comment['url']}"
            )
            lines.extend(_marked(comment["text"]))
            if comment.get("body_chars"):
                lines.append(f"    (cut from {comment['body_chars']:,} chars)")
    revisions = page["revisions"]
    more = "+" if revisions.get("total_is_lower_bound") else ""
    lines.append(
        f"revision chain (git log -L, newest first): {revisions['returned']} of "
        f"{revisions['total']}{more}"
    )
    lines.extend(_commit_line(row) for row in revisions["commits"])
    if revisions.get("note"):
        lines.append(f"  {revisions['note']}")
    origin = page["origin"]
    if origin.get("word"):
        lines.append(
            f"origin chain of {_f(origin['word'])} (git log -S, oldest first): "
            f"{origin['returned']} of {origin['total']}"
        )
        lines.extend(_commit_line(row) for row in origin["commits"])
    elif origin.get("declined"):
        lines.append(f"origin chain: declined — {origin.get('note', origin['declined'])}")
    else:
        lines.append(f"origin chain: none — {origin.get('note', '')}")
    tried = [c for c in origin.get("candidates", []) if c.get("walked") or c.get("skipped")]
    if tried:
        shown = []
        for c in tried:
            if c.get("walked"):
                since = f" from {c['oldest']['date']}" if c.get("oldest") else ""
                shown.append(f"{_f(c['word'])} ({_plural(c['commits'], 'commit')}{since})")
            else:
                shown.append(f"{_f(c['word'])} ({c['skipped']})")
        lines.append("  words tried: " + ", ".join(shown))
    budget = _budget_line(page.get("budget"))
    if budget:
        lines.append(budget)
    return "\n".join(lines)


def symbol_page(page: dict) -> str:
    where = f" under {page['path']}" if page.get("path") else ""
    head = (
        f"symbol {page['name']!r} in {page['repo']}{where} at {page['head'][:12]}: "
        f"{page['returned']} of {page['total']}"
    )
    if page.get("kinds"):
        head += f" ({_counts(page['kinds'])})"
    lines = [head]
    if not page["total"]:
        lines.append(f"no definition named {page['name']!r} in the clone")
    for row in page["definitions"]:
        mark = "  [file has syntax errors]" if row.get("syntax_errors_in_file") else ""
        lines.append(
            f"{_f(row['path'])}:{row['line']}  {row['kind']}  {_f(row['qualified'])}{mark}"
        )
        lines.extend(_marked(row.get("text")))
    if page.get("left_out"):
        lines.append(f"{page['left_out']} more not shown: narrow with --path")
    if page.get("files"):
        lines.append(_files_line(page["files"]))
    return "\n".join(lines)


def grep_page(page: dict) -> str:
    flags = [page["mode"]]
    if page.get("ignore_case"):
        flags.append("ignore case")
    if page.get("path"):
        flags.append(f"path={page['path']}")
    total = f"{page['total']:,}" + ("+" if page.get("total_is_lower_bound") else "")
    files = f" in {page['files']:,} files" if page.get("files") is not None else ""
    lines = [
        f"grep {page['pattern']!r} in {page['repo']} at {page['head'][:12]} "
        f"[{', '.join(flags)}]: {page['returned']} of {total} lines{files}"
    ]
    for match in page["matches"]:
        lines.append(f"{_f(match['path'])}:{match['line']}")
        lines.extend(_marked(match["text"]))
    if page.get("note"):
        lines.append(page["note"])
    elif page["total"] > page["returned"]:
        lines.append(
            f"{page['total'] - page['returned']:,} more lines: narrow with --path or the pattern"
        )
    return "\n".join(lines)


def copies_page(page: dict) -> str:
    lines = [
        f"copies of {page['name']!r} in {page['repo']} at {page['head'][:12]}: "
        f"{page['returned']} of {page['total']} `Copied from` markers in "
        f"{_plural(page['files'], 'file')}"
    ]
    for target, n in page.get("targets", {}).items():
        lines.append(f"  target {_f(target)}: {n}")
    for row in page["copies"]:
        copy = row.get("copy")
        what = f"{copy['kind']} {_f(copy['name'])} (line {copy['line']})" if copy else "a block"
        lines.append(f"{_f(row['path'])}:{row['line']}  {what} ← {_f(row['target'])}")
        lines.extend(_marked(row.get("with")))
    if page.get("note"):
        lines.append(page["note"])
    elif page["total"] > page["returned"]:
        lines.append(f"{page['total'] - page['returned']} more not shown")
    return "\n".join(lines)
