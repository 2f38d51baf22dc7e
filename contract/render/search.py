"""``relore search``: a page of ranked threads, each with its evidence."""

from __future__ import annotations

from relore.contract import sanitize
from relore.contract.render.marks import _f, _marked, _notices, _qualified, _state


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
