"""``GET /api/v1/rules``: the rules a change needs, read from ``marts.rules``.

Query: ``repo`` (owner/name), ``file`` (one or more), ``task`` (one sentence, at most 500
characters), ``include`` (rule ids, repeatable), ``max_tokens`` (at least 100), ``refresh``
(1 / true), ``session`` (the caller's session id; without one nothing is remembered),
``session_token`` (the token the session's last reply carried).

Serve reads rules through the SELECT-only role like every other verb and writes nothing to
the database. A session's state travels with the caller (``session_token``, signed: see
``sessions``), so any worker of any replica answers it; the only thing a daemon writes is
the served-events log, which is never served.

A repository's rules are read by ``repo_id``, the caller's name resolved by
``serve/repos.py`` like every verb's (a renamed repository keeps its rules, whatever name
they were loaded under). Rules may be loaded before their repository is ever extracted: until
it is, they have no ``repo_id`` and are read by the lower-cased name they were loaded under
(the ``(repo, rule_id)`` index), so the rules of a repository the index does not hold are
still served.
"""

from __future__ import annotations

import time

from psycopg.rows import dict_row
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from relore.contract.rules.choose import choose, present, to_rule
from relore.serve import inputs, repos, responses
from relore.serve.rules import sessions

RULES_SQL = """
    select
        rule_id, title, rule_text, scopes, is_active, triggers, is_always, is_tagged,
        has_hidden_characters, created_at
    from marts.rules
    where repo_id = %(repo_id)s
        or (%(repo_id)s::bigint is null and repo_id is null and repo = %(repo)s)
"""


async def rules_rows(conn, repo: str) -> list[dict]:
    """The rules ``marts.rules`` holds for the repository."""
    repo_id = await repos.find(conn, repo)
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(RULES_SQL, {"repo_id": repo_id, "repo": repo.lower()})
        return await cur.fetchall()


def parse(params) -> dict:
    got = inputs.parse("rules", params)  # as contract/verbs declares it
    got["repo"], got["files"] = got["repo"].lower(), got.pop("file")
    return got


def _session(request: Request, query: dict, now: float) -> tuple[sessions.State, str | None]:
    """The session's state from the token it sent back, and why a token was not taken."""
    token, session = query["session_token"], query["session"]
    if not session or not token:
        return sessions.State(), None
    key = request.app.state.session_key
    state = sessions.decode(key, query["repo"], session, token, now)
    if isinstance(state, str):
        return sessions.State(), sessions.REJECTED[state]
    return state, None


async def rules_endpoint(request: Request) -> Response:
    query = parse(request.query_params)
    async with request.app.state.pool.connection() as conn:
        rows = await rules_rows(conn, query["repo"])
    repo, session, now = query["repo"], query["session"], time.time()
    rules = [to_rule(r) for r in rows]
    state, rejected = _session(request, query, now)
    reply, served = choose(
        rules,
        query["files"],
        query["task"],
        include=query["include"],
        max_tokens=query["max_tokens"],
        refresh=query["refresh"],
        session=state.view(r.id for r in rules),
    )
    if rejected:
        reply["notes"].insert(0, rejected)
    if not rows:
        reply["notes"].append(
            f"no rules are loaded for {repo} (the operator loads them with `relored rules load`)"
        )
    token = None
    if session:
        settings = request.app.state.settings
        token, forgot = sessions.issue(
            request.app.state.session_key,
            repo,
            session,
            state.after(served),
            now,
            ttl=settings.session_ttl_s,
        )
        if forgot:
            reply["notes"].append(sessions.full_note(forgot))
    sessions.append_event(sessions.log_path(), repo, session, reply)
    page = {"repo": repo, "session": session, **reply, "session_token": token}
    return responses.json_response(present(page))


def routes(prefix: str) -> list[Route]:
    return [Route(f"{prefix}/rules", rules_endpoint)]
