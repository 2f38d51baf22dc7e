"""``relore thread``: one thread, its head, comments and links."""

from __future__ import annotations

from relore.contract import sanitize
from relore.contract.render.marks import _f, _marked, _notices, _qualified


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
