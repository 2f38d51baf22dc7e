"""``relored rules``: the operator's side of rule serving.

``load`` lands a rules file; ``pin``, ``unpin`` and ``tag`` land edits (all append-only, in
``raw``). ``list``, ``untagged``, ``resolve`` and ``usage`` read ``marts.rules``, so they say
so when ``dbt build`` has not run since the last load or edit. ``resolve`` computes exactly
what an agent would be sent, with the daemon's own code, and records nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from relore.contract import patterns
from relore.operate.exits import ExitStatus


def _repo(value: str) -> str:
    if not patterns.is_repo(value):
        raise argparse.ArgumentTypeError(f"expected owner/name, got {value!r}")
    return value.lower()


def add_parser(verbs) -> None:
    rules = verbs.add_parser(
        "rules",
        help="load, tag and inspect the rules served to agents (`relore rules`)",
        description="load FILE | list [--details] | pin ID | unpin ID | tag ID --triggers "
        "a,b [--always] | untagged | resolve FILE... --task T | usage. list, untagged, "
        "resolve and usage read marts.rules: run `dbt build` after load and edits.",
    )
    actions = rules.add_subparsers(dest="rules_action", required=True, metavar="ACTION")

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help_text)
        p.add_argument("--repo", required=True, type=_repo, help="owner/name")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        return p

    action("load", "land a YAML rules file (unchanged: nothing written)").add_argument(
        "file", type=Path
    )
    action("list", "the rule set as dbt built it").add_argument(
        "--details", action="store_true", help="text, triggers, scopes and dates of each rule"
    )
    action("pin", "send the rule on every request (always)").add_argument("rule_id")
    action("unpin", "send the rule only when chosen").add_argument("rule_id")
    tag = action("tag", "set a rule's trigger words (and --always)")
    tag.add_argument("rule_id")
    tag.add_argument("--triggers", required=True, help="comma-separated words")
    tag.add_argument("--always", action="store_true", help="also pin it")
    action("untagged", "active rules without trigger words or always: what needs tagging")
    resolve = action("resolve", "exactly what an agent would be sent (never counts as served)")
    resolve.add_argument("files", nargs="+", metavar="FILE")
    resolve.add_argument("--task", help="the change, in one sentence")
    resolve.add_argument("--include", action="append", default=[], metavar="ID")
    resolve.add_argument("--max-tokens", type=int)
    action("usage", "which rules agents actually receive, unused first")


def _stale_note(conn, repo: str, rows: list[dict] | None) -> str | None:
    from relore.extract import rules_loader

    landed = rules_loader.last_landed(conn, repo)
    if rows is None:
        return "marts.rules does not exist yet: run `dbt build`"
    built = max((r["source_loaded_at"] for r in rows), default=None)
    if landed is not None and (built is None or built < landed):
        return (
            f"marts.rules is older than the last load or edit for {repo} "
            f"({landed:%Y-%m-%d %H:%M:%S}): run `dbt build` to see and serve it"
        )
    return None


def _print(out: TextIO, args, payload: dict, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, default=str, indent=2), file=out)
    else:
        print("\n".join(lines), file=out)


def _load(conn, args, out: TextIO, err: TextIO) -> int:
    from relore.extract import rules_loader

    rules = rules_loader.read_rules_file(args.file)
    result = rules_loader.land_rules(conn, args.repo, str(args.file), rules)
    keyed = (
        f"repo_id {result.repo_id}"
        if result.repo_id is not None
        else "not extracted yet: keyed on its name"
    )
    lines = [
        f"{result.repo} ({keyed}): {result.rules} rules from {args.file}: "
        + (
            "landed; run `dbt build` to serve them"
            if result.written
            else "unchanged, nothing written"
        )
    ]
    if result.hidden:
        lines.append(
            f"{len(result.hidden)} rule(s) hold hidden characters (zero-width or bidi "
            f"controls) and will never be served: {', '.join(result.hidden)}"
        )
    untagged = [r["id"] for r in rules if r["active"] and not r["triggers"] and not r["always"]]
    if untagged:
        lines.append(
            f"{len(untagged)} active rule(s) are untagged (no triggers, not always): "
            "`relored rules untagged` lists them"
        )
    _print(
        out,
        args,
        {
            "repo": result.repo,
            "repo_id": result.repo_id,
            "rules": result.rules,
            "written": result.written,
            "hidden": result.hidden,
            "untagged": untagged,
        },
        lines,
    )
    return ExitStatus.OK


def _edit(conn, args, out: TextIO) -> int:
    from relore.extract import rules_loader

    triggers = None
    always = None
    if args.rules_action == "tag":
        triggers = [t.strip() for t in args.triggers.split(",") if t.strip()]
        always = True if args.always else None
    rule_id = rules_loader.land_edit(
        conn, args.repo, args.rule_id, args.rules_action, triggers=triggers, always=always
    )
    what = {
        "pin": "pinned: sent on every request its scope covers",
        "unpin": "unpinned: sent only when chosen for a task",
        "tag": f"tagged with {', '.join(triggers or []) or 'no words'}"
        + (" and pinned" if always else ""),
    }[args.rules_action]
    _print(
        out,
        args,
        {"repo": args.repo, "rule_id": rule_id, "action": args.rules_action, "landed": True},
        [f"{args.repo} {rule_id} {what}; run `dbt build` to serve it"],
    )
    return ExitStatus.OK


def _flags(row: dict) -> str:
    flags = []
    if row["is_always"]:
        flags.append("always")
    if not row["is_active"]:
        flags.append("inactive")
    if not row["is_tagged"]:
        flags.append("untagged")
    if row["has_hidden_characters"]:
        flags.append("HIDDEN CHARACTERS: never served")
    return f" ({', '.join(flags)})" if flags else ""


def _list(rows: list[dict], args, out: TextIO, stale: str | None) -> int:
    lines = [stale] if stale else []
    untagged = sum(1 for r in rows if r["is_active"] and not r["is_tagged"])
    active = sum(1 for r in rows if r["is_active"])
    lines.append(f"{args.repo}: {len(rows)} rules, {active} active, {untagged} untagged")
    for row in rows:
        lines.append(f"{row['rule_id']}  {', '.join(row['scopes'])}  {row['title']}{_flags(row)}")
        if args.details:
            if row["triggers"]:
                lines.append(f"    triggers: {', '.join(row['triggers'])}")
            lines.append(
                f"    created {row['created_at']:%Y-%m-%d}; from {row['source_path']}"
                + (
                    f"; edited {row['last_edited_at']:%Y-%m-%d %H:%M}"
                    if row["last_edited_at"]
                    else ""
                )
            )
            lines.extend("    > " + line for line in row["rule_text"].splitlines())
    _print(out, args, {"repo": args.repo, "stale": stale, "rules": rows}, lines)
    return ExitStatus.OK


def _untagged(rows: list[dict], args, out: TextIO, stale: str | None) -> int:
    todo = [r for r in rows if r["is_active"] and not r["is_tagged"]]
    lines = [stale] if stale else []
    lines.append(
        f"{args.repo}: {len(todo)} active rule(s) without triggers or always; they are matched "
        "on their text alone and can be held back when they matter"
    )
    for row in todo:
        lines.append(f"{row['rule_id']}  {', '.join(row['scopes'])}  {row['title']}")
    if todo:
        lines.append(
            f"tag one: relored rules tag ID --repo {args.repo} --triggers word,word [--always]"
        )
    _print(
        out,
        args,
        {"repo": args.repo, "stale": stale, "untagged": [r["rule_id"] for r in todo]},
        lines,
    )
    return ExitStatus.OK


def _resolve(rows: list[dict], args, out: TextIO, stale: str | None) -> int:
    from relore.contract import render
    from relore.contract.rules.choose import choose, present, to_rule

    reply, _served = choose(
        [to_rule(r) for r in rows],
        args.files,
        args.task,
        include=args.include,
        max_tokens=args.max_tokens,
    )
    page = present({"repo": args.repo, "session": None, **reply})
    if stale:
        page["notes"].insert(0, stale)
    if args.json:
        print(json.dumps(page, ensure_ascii=False, indent=2), file=out)
    else:
        print(render.enveloped(page, render.rules_page(page), compact=True), file=out)
    return ExitStatus.OK


def _usage(rows: list[dict], args, out: TextIO, stale: str | None, env) -> int:
    from relore.serve.rules import sessions

    path = sessions.log_path(env)
    events = [e for e in sessions.read_events(path) if e.get("repo") == args.repo]
    counts: dict[str, int] = {}
    last: dict[str, str] = {}
    for event in events:
        for rule_id in event.get("sent", []):
            counts[rule_id] = counts.get(rule_id, 0) + 1
            last[rule_id] = event.get("at", "")
    active = [r for r in rows if r["is_active"]]
    table = sorted(
        (
            {
                "rule_id": r["rule_id"],
                "title": r["title"],
                "sent": counts.get(r["rule_id"], 0),
                "last_sent": last.get(r["rule_id"]),
                "always": r["is_always"],
            }
            for r in active
        ),
        key=lambda x: (x["sent"], x["rule_id"]),
    )
    sessions_seen = {e.get("session") for e in events if e.get("session")}
    tokens = sum(e.get("tokens", 0) for e in events)
    lines = [stale] if stale else []
    lines.append(
        f"{args.repo}: {len(events)} replies sent rules ({len(sessions_seen)} sessions, "
        f"~{tokens} tokens) per {path}; {sum(1 for t in table if not t['sent'])} of "
        f"{len(table)} active rules never sent"
    )
    for entry in table:
        when = f", last {entry['last_sent']}" if entry["last_sent"] else ""
        pin = " (always)" if entry["always"] else ""
        lines.append(f"{entry['sent']:>5}  {entry['rule_id']}  {entry['title']}{pin}{when}")
    _print(
        out,
        args,
        {"repo": args.repo, "log": str(path), "replies": len(events), "rules": table},
        lines,
    )
    return ExitStatus.OK


def run(args, out: TextIO, err: TextIO, env) -> int:
    from relore.extract import rules_loader
    from relore.operate import database

    if args.rules_action == "resolve" and args.max_tokens is not None and args.max_tokens < 100:
        print("relored: --max-tokens must be at least 100", file=err)
        return ExitStatus.USAGE
    url = database.ensure_database(env)
    with database.connect(url, autocommit=True) as conn:
        if args.rules_action == "load":
            return _load(conn, args, out, err)
        if args.rules_action in ("pin", "unpin", "tag"):
            return _edit(conn, args, out)
        rows = rules_loader.mart_rows(conn, args.repo)
        stale = _stale_note(conn, args.repo, rows)
        if rows is None:
            print(f"relored: {stale}", file=err)
            return ExitStatus.ERROR
        if stale and not args.json:
            print(f"relored: {stale}", file=err)
        if args.rules_action == "list":
            return _list(rows, args, out, stale)
        if args.rules_action == "untagged":
            return _untagged(rows, args, out, stale)
        if args.rules_action == "resolve":
            return _resolve(rows, args, out, stale)
        return _usage(rows, args, out, stale, env)
