"""``relore status``: the daemon, its database and replicas, each repository's freshness."""

from __future__ import annotations

from relore.contract.render.marks import _plural


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
