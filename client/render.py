"""The one renderer: dicts from the daemon in, text out. Stdlib only.

Retrieved prose is somebody else's words: every line of it is prefixed with ``>`` so an
unmarked line is always ours (counts, trust tiers, dates, URLs).
"""

from __future__ import annotations


def quote(text: str | None) -> list[str]:
    if not text:
        return []
    return ["> " + line if line else ">" for line in text.replace("\r", "").split("\n")]


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
        lines.extend("   " + q for q in quote(hit.get("snippet")))
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
