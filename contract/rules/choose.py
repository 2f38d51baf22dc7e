"""Which rules a change needs: the seven steps, as one pure function over in-memory rules.

1. Eligibility: active rules whose scope covers at least one given file, at the most
   specific level any of their scopes reaches (file glob > section > global). A rule with
   hidden characters (zero-width, bidi controls) is never served; the reply counts it.
2. With 10 or fewer eligible rules, or no task, every eligible rule is sent, and a reply
   without a task says so.
3. Otherwise BM25 of the task against each eligible rule; a rule is sent when it is
   ``always``, named in ``include``, or scores above zero and at least 30% of the best.
4. Order: always-rules, relevance, most specific scope, oldest (without a task: always,
   most specific, oldest).
5. A rule already sent in this session is not sent again, only counted; ``refresh`` sends
   it again (after the agent's context was reset).
6. The id and title of every other eligible rule, up to 25 lines, each once per session.
7. ``max_tokens`` (at least 100): serving stops at the first rule that does not fit, so a
   general rule is never sent in place of a more specific one left out.

``choose`` does not change the session: it returns the reply and what to record, and the
caller records it (``resolve`` never does).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from relore.contract.envelope import one_line, quote, wrap
from relore.contract.limits import MAX_TASK_CHARS, MIN_MAX_TOKENS
from relore.contract.rules import bm25

FILE, SECTION, GLOBAL = "file", "section", "global"
LEVEL_RANK = {FILE: 0, SECTION: 1, GLOBAL: 2}
SHORT_LIST = 10
RELATIVE_CUTOFF = 0.30
MAX_OTHER_LINES = 25
HIDDEN_CHARACTERS = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_GLOB_CHARS = re.compile(r"[*?\[{]")


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    text: str
    scopes: tuple[str, ...] = ("global",)
    active: bool = True
    triggers: tuple[str, ...] = ()
    always: bool = False
    created: str = ""  # ISO timestamp; orders "oldest first", empty sorts last
    hidden: bool = False  # computed by dbt (marts.rules.has_hidden_characters)
    tagged: bool = True


def to_rule(row: Mapping) -> Rule:
    """A ``marts.rules`` row as a Rule (serve and ``relored rules resolve``)."""
    created = row["created_at"]
    return Rule(
        id=row["rule_id"],
        title=row["title"] or "",
        text=row["rule_text"] or "",
        scopes=tuple(row["scopes"] or ()),
        active=bool(row["is_active"]),
        triggers=tuple(row["triggers"] or ()),
        always=bool(row["is_always"]),
        created=created.isoformat() if created is not None else "",
        hidden=bool(row["has_hidden_characters"]),
        tagged=bool(row["is_tagged"]),
    )


@dataclass
class SessionView:
    """What a session has been given so far (read-only to ``choose``)."""

    sent: set[str] = field(default_factory=set)
    listed: set[str] = field(default_factory=set)
    notes: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Served:
    """What to record in the session once the reply has gone out."""

    sent: tuple[str, ...]
    listed: tuple[str, ...]
    notes: tuple[str, ...]
    refresh: bool


def normalize_path(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "{" and "}" in pattern[i:]:
            end = pattern.index("}", i)
            options = pattern[i + 1 : end].split(",")
            out.append("(?:" + "|".join(re.escape(o) for o in options) + ")")
            i = end + 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


def scope_level(scope: str, path: str) -> str | None:
    """The level at which ``scope`` covers ``path`` (None: it does not).

    ``global`` covers everything; a scope with ``*``, ``?``, ``[`` or ``{`` is a file glob
    (``**`` crosses folders, ``*`` does not, ``{ts,tsx}`` is either); one ending in ``/`` is a section (a folder); a plain
    path is the file itself, or a section when the path lies under it."""
    scope = scope.strip()
    if scope.lower() == GLOBAL:
        return GLOBAL
    scope = normalize_path(scope)
    if _GLOB_CHARS.search(scope):
        return FILE if _glob_regex(scope).match(path) else None
    if scope.endswith("/"):
        return SECTION if path.startswith(scope) else None
    if path == scope:
        return FILE
    if path.startswith(scope + "/"):
        return SECTION
    return None


@dataclass(frozen=True)
class Eligible:
    rule: Rule
    level: str
    scope: str  # the scope that reached that level (the longest one, on a tie)

    @property
    def specificity(self) -> tuple[int, int]:
        return LEVEL_RANK[self.level], -len(self.scope)


def eligibility(rule: Rule, paths: Sequence[str]) -> Eligible | None:
    best: Eligible | None = None
    for scope in rule.scopes:
        for path in paths:
            level = scope_level(scope, path)
            if level is None:
                continue
            candidate = Eligible(rule, level, scope.strip())
            if best is None or candidate.specificity < best.specificity:
                best = candidate
    return best


def has_hidden_characters(*texts: str) -> bool:
    """The loader's early warning; what is served follows dbt's flag (``Rule.hidden``)."""
    return any(HIDDEN_CHARACTERS.search(t or "") for t in texts)


def rule_tokens(rule: Rule) -> int:
    """A rule's cost as sent: characters / 4 of its line and its text."""
    return math.ceil((len(rule.id) + len(rule.title) + len(rule.text) + 16) / 4)


def _section_name(scope: str) -> str:
    return normalize_path(scope).rstrip("/")


def choose(
    rules: Iterable[Rule],
    files: Sequence[str],
    task: str | None = None,
    *,
    include: Collection[str] = (),
    max_tokens: int | None = None,
    refresh: bool = False,
    session: SessionView | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[dict, Served]:
    """The reply for these files and task, and what to record in the session."""
    if max_tokens is not None and max_tokens < MIN_MAX_TOKENS:
        raise ValueError(f"max_tokens must be at least {MIN_MAX_TOKENS}")
    task = (task or "").strip() or None
    if task is not None and len(task) > MAX_TASK_CHARS:
        raise ValueError(f"the task is {len(task)} characters; at most {MAX_TASK_CHARS}")
    session = session or SessionView()
    paths = [normalize_path(f) for f in files if normalize_path(f)]
    rules = list(rules)
    include = {i.strip().lower() for i in include if i.strip()}

    # 1. eligibility by scope; hidden characters never go out
    eligible: list[Eligible] = []
    hidden = 0
    for rule in rules:
        if not rule.active:
            continue
        reached = eligibility(rule, paths)
        if reached is None:
            continue
        if rule.hidden:
            hidden += 1
            continue
        eligible.append(reached)
    by_id = {e.rule.id.lower(): e for e in eligible}

    # 2-3. everything, or what the task needs
    scores: dict[str, float] = {}
    if task is None:
        mode = "all: no task"
        chosen = list(eligible)
    elif len(eligible) <= SHORT_LIST:
        mode = f"all: {SHORT_LIST} or fewer eligible"
        chosen = list(eligible)
    else:
        mode = "ranked"
        # IDF over every servable rule of the project, so a rule's score does not depend on
        # which files were named alongside it
        corpus = {
            r.id: bm25.rule_terms(r.title, r.text, r.triggers, env)
            for r in rules
            if r.active and not r.hidden
        }
        index = bm25.Index(corpus)
        query = bm25.query_weights(task, env)
        scores = {e.rule.id: index.score(e.rule.id, query) for e in eligible}
        best = max(scores.values(), default=0.0)
        chosen = [
            e
            for e in eligible
            if e.rule.always
            or e.rule.id.lower() in include
            or (scores[e.rule.id] > 0 and scores[e.rule.id] >= RELATIVE_CUTOFF * best)
        ]

    # 4. order
    def order(e: Eligible):
        relevance = -scores.get(e.rule.id, 0.0)
        return (not e.rule.always, relevance, *e.specificity, e.rule.created or "~", e.rule.id)

    chosen.sort(key=order)

    # 5. never repeated within a session
    already = [] if refresh else [e for e in chosen if e.rule.id in session.sent]
    to_send = [e for e in chosen if refresh or e.rule.id not in session.sent]

    # 7. the cap: stop at the first rule that does not fit
    sent: list[Eligible] = []
    over_cap: list[Eligible] = []
    used = 0
    for i, e in enumerate(to_send):
        cost = rule_tokens(e.rule)
        if max_tokens is not None and used + cost > max_tokens:
            over_cap = to_send[i:]
            break
        sent.append(e)
        used += cost

    # 6. the titles of every other eligible rule, each once per session
    sent_ids = {e.rule.id for e in sent}
    others = [
        e
        for e in sorted(eligible, key=order)
        if e.rule.id not in sent_ids and (refresh or e.rule.id not in session.sent)
    ]
    over_cap_ids = {e.rule.id for e in over_cap}  # always listed: the note points at them
    fresh = [
        e for e in others if refresh or e.rule.id not in session.listed or e.rule.id in over_cap_ids
    ]
    listed = fresh[:MAX_OTHER_LINES]

    notes: list[str] = []
    notes_shown: list[str] = []

    def once(key: str, note: str) -> None:
        if refresh or key not in session.notes:
            notes.append(note)
            notes_shown.append(key)

    if task is None:
        notes.append(
            "no task given: every eligible rule was sent; pass a task (one sentence) next "
            "time and only the rules your change needs are sent"
        )
    if already:
        notes.append(
            f"{len(already)} rule(s) already sent in this session were not repeated; "
            "pass --refresh (refresh=1 over HTTP) if your context was reset"
        )
    if over_cap:
        notes.append(
            f"stopped at the token cap ({max_tokens}): {len(over_cap)} rule(s) did not fit "
            "and are listed by title"
        )
    unknown = sorted(include - set(by_id))
    if unknown:
        notes.append(
            "not eligible for these files, so not sent: include " + ", ".join(unknown[:10])
        )
    untagged = sum(1 for e in eligible if not e.rule.tagged)
    if untagged:
        once(
            "untagged",
            f"{untagged} eligible rule(s) are untagged and matched on their text alone; "
            "the operator lists them with `relored rules untagged`",
        )
    if hidden:
        once(
            "hidden",
            f"{hidden} rule(s) cover these files but contain hidden characters "
            "(zero-width or bidi controls) and are never served; tell the operator",
        )
    if not eligible and not hidden:
        notes.append("no rule covers these files")

    sections = sorted({_section_name(e.scope) for e in eligible if e.level == SECTION})
    reply = {
        "files": paths,
        "task": task,
        "mode": mode,
        "sections": sections,
        "eligible": len(eligible),
        "returned": len(sent),
        "rules": [
            {
                "id": e.rule.id,
                "title": e.rule.title,
                "text": e.rule.text,
                "level": e.level,
                "scope": e.scope,
                "always": e.rule.always,
                "score": round(scores[e.rule.id], 3) if e.rule.id in scores else None,
                "tokens": rule_tokens(e.rule),
            }
            for e in sent
        ],
        "tokens": used,
        "max_tokens": max_tokens,
        "refresh": refresh,
        "held_back": {
            "already_sent": len(already),
            "not_chosen": len(eligible) - len(chosen),
            "over_cap": len(over_cap),
            "hidden_characters": hidden,
        },
        "others": [{"id": e.rule.id, "title": e.rule.title, "level": e.level} for e in listed],
        "others_total": len(others),
        "others_listed_earlier": len(others) - len(fresh),
        "notes": notes,
    }
    served = Served(
        sent=tuple(sorted(sent_ids)),
        listed=tuple(e.rule.id for e in listed),
        notes=tuple(notes_shown),
        refresh=refresh,
    )
    return reply, served


def present(reply: dict) -> dict:
    """The reply as it leaves: rule text quoted line by line, titles on one line, our
    delimiters scrubbed and the envelope on last (serve and ``relored rules resolve`` both)."""
    page = dict(reply)
    page["rules"] = [
        {**r, "title": one_line(r["title"]), "text": quote(r["text"])} for r in reply["rules"]
    ]
    page["others"] = [{**o, "title": one_line(o["title"])} for o in reply["others"]]
    return wrap(page)
