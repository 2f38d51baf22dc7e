"""Answers from the daemon's working clone: ``relore why``, ``symbol``, ``grep``, ``copies``.

The daemon has already marked every line of source or comment text with '>'."""

from __future__ import annotations

from relore.contract.render.lens import _counts, _files_line
from relore.contract.render.marks import _f, _marked, _plural


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
