"""``relore rules``: the rules chosen for a file and a task."""

from __future__ import annotations

from relore.contract.render.marks import _f, _marked


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
