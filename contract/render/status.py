"""``relore status``: the daemon, its database and replicas, each repository's freshness."""

from __future__ import annotations

from relore.contract import sanitize
from relore.contract.render.marks import _f, _plural


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


def _budget_line(budget: dict) -> str:
    """The token's budget as the latest cycle recorded it."""
    if not budget.get("recorded"):
        return "token budget: not recorded (`relored cycle` has not run)"
    limit = budget.get("limit")
    of = f" of {limit:,}" if limit is not None else ""
    head = f"token budget: {budget['remaining']:,}{of} requests left"
    recorded = f"recorded {budget.get('recorded_age') or '?'} ago, cycle {budget.get('cycle')}"
    reset = budget.get("reset_at") or "?"
    if budget.get("reset_passed"):
        whole = "the hour's budget is whole again"
        return f"{head} ({recorded}); its reset at {reset} has passed: {whole}"
    return f"{head}, resets at {reset} ({recorded})"


_OUTCOME = {
    "budget": "ran out of the token's budget; the next cycle resumes at its marks",
    "waiting": "waited: no budget was left above the reserve",
    "failed": "failed",
    "partial": "stopped part-way; the next cycle resumes at its marks",
    "running": "never finished (running now, or killed)",
    "done": "finished",
}


def _turn(latest: dict) -> str:
    said = _OUTCOME.get(latest["outcome"], latest["outcome"])
    return f"its {latest['role']} in cycle {latest['cycle']} {said}"


def _backfill(backfill: dict) -> str:
    mark = f" from {backfill['high_water']}" if backfill.get("high_water") else ""
    return (
        f"backfilling: {backfill['passes_done']} of {backfill['passes']} passes complete, "
        f"next {backfill['next_pass']}{mark}"
    )


def freshness_lines(fresh: dict) -> list[str]:
    """A repository's place in the hourly loop: fresh, or BEHIND and why."""
    latest, backfill = fresh.get("latest"), fresh.get("backfill") or {}
    polled = (
        f"last poll finished {fresh['last_poll_age']} ago ({fresh['last_poll_at']})"
        if fresh.get("last_poll_at")
        else "never polled to the end"
    )
    if fresh.get("behind") is None:
        return ["  freshness: not known (no cycle of `relored cycle` recorded)"]
    if not fresh["behind"]:
        if fresh.get("last_poll_at"):
            return [f"  freshness: {polled}; backfill complete"]
        done = fresh.get("last_done_age") or "?"
        return [f"  freshness: backfill complete {done} ago; polled from the next cycle"]
    why = fresh.get("why")
    after = f"{(fresh.get('behind_after_s') or 0) // 60} min"
    if why == "never_cycled":
        said = "in no cycle of `relored cycle`: add it to the loop's repositories"
    elif why == "backfilling":
        said = _backfill(backfill) + (f"; {_turn(latest)}" if latest else "")
    elif why == "stale":
        done = fresh.get("last_done_age")
        said = (
            f"{polled}; nothing finished for {done}, more than {after}: is the hourly loop running?"
            if done
            else f"{polled}; no turn ever finished"
        ) + (f"; {_turn(latest)}" if latest and latest["outcome"] != "done" else "")
    else:
        said = f"{_turn(latest)}; {polled}" if latest else polled
    lines = [f"  BEHIND: {said}"]
    if latest and latest.get("reason") and latest["outcome"] != "done":
        lines.append(f"    why: {_f(sanitize.one_line(latest['reason'], 300))}")
    return lines


def status_page(page: dict) -> str:
    lines = [
        f"relore {page['version']} on {page['engine']}: {_plural(page['total'], 'repository')}"
    ]
    where = page.get("replica") or {}
    if where.get("standby"):
        lines.append(_replica_line(where))
    if "budget" in page:
        lines.append(_budget_line(page["budget"]))
    behind = [r["repo"] for r in page["repos"] if (r.get("freshness") or {}).get("behind")]
    if behind:
        lines.append(f"behind: {_plural(len(behind), 'repository')} (each says why below)")
    for repo in page["repos"]:
        trust = repo["trust"]
        lines.append(
            f"{repo['repo']}: {repo['threads']} threads ({repo['issues']} issues, "
            f"{repo['prs']} PRs), {repo['documents']} documents "
            f"(authoritative {trust['authoritative']}, reported {trust['reported']}, "
            f"machine {trust['machine']})"
        )
        if "freshness" in repo:
            lines.extend(freshness_lines(repo["freshness"]))
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
                    "current": f"current ({index.get('documents', 0):,} documents"
                    + (", in the shared index" if index.get("shared") else "")
                    + f", refreshed {index.get('refreshed_at')})",
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
