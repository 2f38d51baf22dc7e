"""``GET /api/v1/rules``: the rules a change needs, read from ``marts.rules``.

Query: ``repo`` (owner/name), ``file`` (one or more), ``task`` (one sentence, at most 500
characters), ``include`` (rule ids, repeatable), ``max_tokens`` (at least 100), ``refresh``
(1 / true), ``session`` (the caller's session id; without one nothing is remembered).

Serve reads rules through the SELECT-only role like every other verb; the only state it
keeps is in memory (sessions) and the served-events log, neither of which is ever served.
"""

from __future__ import annotations

from psycopg.rows import dict_row
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from relore.contract import patterns
from relore.contract.limits import MAX_TASK_CHARS, MIN_MAX_TOKENS
from relore.contract.rules.choose import choose, present, to_rule
from relore.serve.rules import sessions

MAX_FILES = 50
MAX_INCLUDE = 25

RULES_SQL = """
    select
        rule_id, title, rule_text, scopes, is_active, triggers, is_always, is_tagged,
        has_hidden_characters, created_at
    from marts.rules
    where repo = lower(%s)
"""


class BadRequest(ValueError):
    pass


def parse(params) -> dict:
    repo = params.get("repo") or ""
    if not patterns.is_repo(repo):
        raise BadRequest("repo must be owner/name")
    files = [f for f in params.getlist("file") if f.strip()]
    if not files:
        raise BadRequest("name at least one file (file=path), relative to the repository root")
    if len(files) > MAX_FILES:
        raise BadRequest(f"at most {MAX_FILES} files per request")
    task = params.get("task") or None
    if task is not None:
        if "\x00" in task:
            raise BadRequest("the task contains a NUL character")
        if len(task) > MAX_TASK_CHARS:
            raise BadRequest(
                f"the task is {len(task)} characters; at most {MAX_TASK_CHARS} (one sentence)"
            )
    include = params.getlist("include")
    if len(include) > MAX_INCLUDE or not all(patterns.RULE_ID_RE.fullmatch(i) for i in include):
        raise BadRequest(f"include takes at most {MAX_INCLUDE} rule ids")
    max_tokens = params.get("max_tokens")
    if max_tokens is not None:
        try:
            max_tokens = int(max_tokens)
        except ValueError:
            raise BadRequest("max_tokens must be an integer") from None
        if max_tokens < MIN_MAX_TOKENS:
            raise BadRequest(f"max_tokens must be at least {MIN_MAX_TOKENS}")
    session = params.get("session") or None
    if session is not None and not patterns.is_session(session):
        raise BadRequest("session must be 1-128 characters of letters, digits and ._:@-")
    refresh = (params.get("refresh") or "").lower() in ("1", "true", "yes")
    return {
        "repo": repo.lower(),
        "files": files,
        "task": task,
        "include": include,
        "max_tokens": max_tokens,
        "session": session,
        "refresh": refresh,
    }


def _store(request: Request) -> sessions.SessionStore:
    state = request.app.state
    store = getattr(state, "rules_sessions", None)
    if store is None:
        store = sessions.SessionStore()
        state.rules_sessions = store
    return store


async def rules_endpoint(request: Request) -> Response:
    try:
        query = parse(request.query_params)
    except BadRequest as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    async with (
        request.app.state.pool.connection() as conn,
        conn.cursor(row_factory=dict_row) as cur,
    ):
        await cur.execute(RULES_SQL, (query["repo"],))
        rows = await cur.fetchall()
    store = _store(request)
    repo = query["repo"]
    reply, served = choose(
        [to_rule(r) for r in rows],
        query["files"],
        query["task"],
        include=query["include"],
        max_tokens=query["max_tokens"],
        refresh=query["refresh"],
        session=store.view(query["session"], repo),
    )
    if not rows:
        reply["notes"].append(
            f"no rules are loaded for {repo} (the operator loads them with `relored rules load`)"
        )
    store.record(query["session"], repo, served)
    sessions.append_event(sessions.log_path(), repo, query["session"], reply)
    return JSONResponse(present({"repo": repo, "session": query["session"], **reply}))


def routes(prefix: str) -> list[Route]:
    return [Route(f"{prefix}/rules", rules_endpoint)]
