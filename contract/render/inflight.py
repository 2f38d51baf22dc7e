"""``relore inflight``: the pull requests that claim to close an issue: open, merged, abandoned."""

from __future__ import annotations

from relore.contract.render.marks import _f, _notices, _qualified
from relore.contract.render.thread import _thread_head, _titled

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
