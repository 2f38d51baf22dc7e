"""Rules into ``raw``: the operator's rules file and edits, append-only like every landing.

A rules file is YAML: a list of rules (or ``{rules: [...]}``), each with ``title``, ``text``,
``scope`` (``global``, a section such as ``src/api/``, a file glob such as
``src/api/**/*.py``, or a list of them), and optionally ``id`` (stable; default: 8 hex
digits of the scope and title), ``active`` (default true), ``triggers`` (words), ``always``
and ``created`` (a date). The file is validated, then landed as one row of
``raw.rule_files``; loading an unchanged file writes nothing. ``pin``, ``unpin`` and
``tag`` land rows in ``raw.rule_edits``. Nothing is ever updated: dbt derives
``marts.rules`` from both.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from relore.contract.rules.choose import has_hidden_characters
from relore.extract.payloads import storable

_ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_KEYS = {"id", "title", "text", "scope", "active", "triggers", "always", "created"}
MAX_RULES = 2000
MAX_TEXT_CHARS = 4000


class RulesFileError(ValueError):
    """The rules file is not what ``relored rules load`` accepts, and why."""


@dataclass(frozen=True)
class LoadResult:
    repo: str
    repo_id: int | None
    rules: int
    written: bool
    hidden: list[str] = field(default_factory=list)


def _words(value, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(
        isinstance(v, str | int) and not isinstance(v, bool) for v in value
    ):
        raise RulesFileError(f"{where}: triggers must be a list of words")
    return [str(v).strip() for v in value if str(v).strip()]


def default_id(scopes: list[str], title: str) -> str:
    return hashlib.sha256(("\n".join(scopes) + "\n" + title).encode()).hexdigest()[:8]


def _created(value, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).isoformat()
        except ValueError:
            pass
    raise RulesFileError(f"{where}: created must be a date like 2025-01-31")


def parse_rules(data, lines: list[int] | None = None) -> list[dict]:
    """Validate and normalise parsed YAML into the rules that will be landed; ``lines``, when
    known, is each rule's first line in the file (named in an error)."""
    if isinstance(data, dict) and set(data) == {"rules"}:
        data = data["rules"]
    if not isinstance(data, list):
        raise RulesFileError("expected a list of rules (or a mapping with one key, rules)")
    if len(data) > MAX_RULES:
        raise RulesFileError(f"{len(data)} rules; at most {MAX_RULES} per repository")
    rules, seen = [], set()
    for n, item in enumerate(data, 1):
        where = f"rule {n}" + (f" (line {lines[n - 1]})" if lines and n <= len(lines) else "")
        if not isinstance(item, dict):
            raise RulesFileError(f"{where}: expected a mapping with title, text and scope")
        unknown = set(item) - _KEYS
        if unknown:
            raise RulesFileError(f"{where}: unknown keys {', '.join(sorted(map(str, unknown)))}")
        title, text = item.get("title"), item.get("text")
        if not isinstance(title, str) or not title.strip():
            raise RulesFileError(f"{where}: title is required")
        if not isinstance(text, str) or not text.strip():
            raise RulesFileError(f"{where} ({title!r}): text is required")
        if len(text) > MAX_TEXT_CHARS:
            raise RulesFileError(f"{where} ({title!r}): text is over {MAX_TEXT_CHARS} characters")
        scope = item.get("scope")
        scopes = [scope] if isinstance(scope, str) else scope
        if (
            not isinstance(scopes, list)
            or not scopes
            or not all(isinstance(s, str) and s.strip() for s in scopes)
        ):
            raise RulesFileError(
                f"{where} ({title!r}): scope is required: global, a section (src/api/), "
                "a file glob (src/**/*.py), or a list of them"
            )
        scopes = [s.strip() for s in scopes]
        rule_id = item.get("id")
        rule_id = default_id(scopes, title.strip()) if rule_id is None else str(rule_id)
        if not _ID_RE.match(rule_id):
            raise RulesFileError(f"{where}: id {rule_id!r} must be 1-64 letters, digits, ._-")
        if rule_id.lower() in seen:
            raise RulesFileError(f"{where}: id {rule_id} is used twice")
        seen.add(rule_id.lower())
        for flag in ("active", "always"):
            if flag in item and not isinstance(item[flag], bool):
                raise RulesFileError(f"{where} ({title!r}): {flag} must be true or false")
        rules.append(
            {
                "id": rule_id,
                "title": title.strip(),
                "text": text.strip(),
                "scopes": scopes,
                "active": item.get("active", True),
                "triggers": _words(item.get("triggers"), where),
                "always": item.get("always", False),
                "created": _created(item.get("created"), where),
            }
        )
    return rules


FORMAT_DOC = "docs/rules.md"


def _rule_lines(node) -> list[int]:
    """Each rule's first line (1-based) from the composed YAML: a list, or {rules: list}."""
    import yaml

    if isinstance(node, yaml.MappingNode) and len(node.value) == 1:
        node = node.value[0][1]
    if isinstance(node, yaml.SequenceNode):
        return [item.start_mark.line + 1 for item in node.value]
    return []


def read_rules_file(path: Path) -> list[dict]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
        lines = _rule_lines(yaml.compose(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise RulesFileError(f"{path}: not YAML: {exc} (the format: {FORMAT_DOC})") from None
    except OSError as exc:
        raise RulesFileError(f"{path}: {exc.strerror}") from None
    try:
        return parse_rules(data, lines)
    except RulesFileError as exc:
        raise RulesFileError(f"{path}: {exc} (the format, with an example: {FORMAT_DOC})") from None


def hidden_ids(rules: list[dict]) -> list[str]:
    """Rules dbt will flag (has_hidden_characters) and serve will never send."""
    return [r["id"] for r in rules if has_hidden_characters(r["title"], r["text"], *r["triggers"])]


def _hash(payload: dict) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _lock(cur: psycopg.Cursor, repo: str) -> None:
    cur.execute("select pg_advisory_xact_lock(hashtext('relore-rules:' || %s))", (repo,))


def repo_id_for(cur: psycopg.Cursor, repo: str) -> int | None:
    """The repository's id: the one whose current name it is, else the one GitHub redirects
    it to (a former name, ops.repo_names); None while it was never extracted."""
    cur.execute(
        """
        select repo_id from ops.repos where lower(full_name) = %(repo)s
        union all
        select repo_id from ops.repo_names where name = %(repo)s and repo_id is not null
        limit 1
        """,
        {"repo": repo.lower()},
    )
    row = cur.fetchone()
    return row[0] if row else None


# The repository's rows of raw.rule_files or raw.rule_edits: landed with its repo_id, or
# without one under any name it answers to (a rename keeps its rules: dbt's int_rules
# resolves them the same way).
OF_REPOSITORY = "(repo_id = %(repo_id)s or (repo_id is null and repo = any(%(names)s)))"


def _keys(cur: psycopg.Cursor, repo: str) -> dict:
    repo = repo.lower()
    repo_id = repo_id_for(cur, repo)
    names = {repo}
    if repo_id is not None:
        cur.execute(
            """
            select lower(full_name) from ops.repos where repo_id = %(repo_id)s
            union
            select name from ops.repo_names where repo_id = %(repo_id)s
            """,
            {"repo_id": repo_id},
        )
        names.update(row[0] for row in cur.fetchall())
    return {"repo_id": repo_id, "names": sorted(names)}


def land_rules(conn: psycopg.Connection, repo: str, path: str, rules: list[dict]) -> LoadResult:
    repo = repo.lower()
    payload, problems = storable({"rules": rules})
    if problems:
        raise RulesFileError(f"{path}: the file holds text Postgres cannot store: {problems}")
    digest = _hash(payload)
    with conn.transaction(), conn.cursor() as cur:
        _lock(cur, repo)
        repo_id = repo_id_for(cur, repo)
        cur.execute(
            f"select payload_hash from raw.rule_files where {OF_REPOSITORY}"
            " order by row_id desc limit 1",
            _keys(cur, repo),
        )
        latest = cur.fetchone()
        written = latest is None or latest[0] != digest
        if written:
            cur.execute(
                """
                insert into raw.rule_files (repo, repo_id, path, payload, payload_hash)
                values (%s, %s, %s, %s, %s)
                """,
                (repo, repo_id, path, Jsonb(payload), digest),
            )
    return LoadResult(repo, repo_id, len(rules), written, hidden_ids(rules))


def loaded_rule_ids(conn: psycopg.Connection, repo: str) -> list[str] | None:
    """The ids in the repository's latest rules file (None: no file loaded)."""
    with conn.cursor() as cur:
        cur.execute(
            f"select payload from raw.rule_files where {OF_REPOSITORY} order by row_id desc limit 1",
            _keys(cur, repo),
        )
        row = cur.fetchone()
    if row is None:
        return None
    return [r["id"] for r in row[0]["rules"]]


def land_edit(
    conn: psycopg.Connection,
    repo: str,
    rule_id: str,
    action: str,
    *,
    triggers: list[str] | None = None,
    always: bool | None = None,
) -> str:
    """Append one edit; returns the rule's id as the file spells it."""
    repo = repo.lower()
    ids = loaded_rule_ids(conn, repo)
    if ids is None:
        raise RulesFileError(f"no rules loaded for {repo}: run `relored rules load` first")
    match = next((i for i in ids if i.lower() == rule_id.lower()), None)
    if match is None:
        raise RulesFileError(f"{repo} has no rule {rule_id} (see `relored rules list`)")
    if action == "pin":
        always = True
    elif action == "unpin":
        always = False
    with conn.transaction(), conn.cursor() as cur:
        _lock(cur, repo)
        cur.execute(
            """
            insert into raw.rule_edits (repo, repo_id, rule_id, action, triggers, is_always)
            values (%s, %s, %s, %s, %s, %s)
            """,
            (
                repo,
                repo_id_for(cur, repo),
                match,
                action,
                Jsonb(triggers) if action == "tag" else None,
                always,
            ),
        )
    return match


def last_landed(conn: psycopg.Connection, repo: str) -> datetime | None:
    """When the repository's rules last changed in raw (a load or an edit)."""
    with conn.cursor() as cur:
        cur.execute(
            f"""
            select greatest(
                (select max(loaded_at) from raw.rule_files where {OF_REPOSITORY}),
                (select max(edited_at) from raw.rule_edits where {OF_REPOSITORY})
            )
            """,
            _keys(cur, repo),
        )
        return cur.fetchone()[0]


def mart_rows(conn: psycopg.Connection, repo: str) -> list[dict] | None:
    """``marts.rules`` for the repository (None: dbt has never built it)."""
    exists = conn.execute("select to_regclass('marts.rules') is not null").fetchone()[0]
    if not exists:
        return None
    with conn.cursor() as cur:
        keys = _keys(cur, repo)
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(
            """
            select * from marts.rules
            where repo_id = %(repo_id)s or (repo_id is null and repo = %(repo)s)
            order by rule_id
            """,
            {**keys, "repo": repo.lower()},
        )
        return cur.fetchall()
