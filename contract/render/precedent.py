"""``relore precedent``: the threads that settled a change like the one described."""

from __future__ import annotations

from relore.contract import sanitize
from relore.contract.render.marks import _f, _marked, _notices, _qualified


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
