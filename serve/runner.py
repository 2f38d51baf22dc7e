"""Running the daemon: ``run`` (``relored serve``) builds the settings from the
environment and starts uvicorn, in this process or as ``--workers N`` processes, each of
which builds its app with ``worker_app``."""

from __future__ import annotations

import json
import os

from starlette.applications import Starlette

from relore.contract.version import __version__
from relore.serve import auth
from relore.serve.app import Settings, create_app
from relore.serve.rules import sessions as rules_sessions

WORKER_SETTINGS_ENV = "RELORE_SERVE_WORKER_SETTINGS"
MAX_WORKERS = 64
# By default a worker per core, up to this many: each holds up to Settings.pool_max database
# connections, and the embedded Postgres allows 60 in all.
DEFAULT_WORKERS_CAP = 8


def default_workers() -> int:
    """A worker process per core (the daemons are stateless), at most DEFAULT_WORKERS_CAP."""
    return max(1, min(os.cpu_count() or 1, DEFAULT_WORKERS_CAP))


def worker_app() -> Starlette:
    """The app of one worker process (``relored serve --workers N``): uvicorn spawns each
    worker afresh and imports this factory, which reads the settings ``run`` put in the
    environment, the session key among them, so every worker signs with the same key. The
    worker takes them out of its environment: nothing it starts (git) inherits them."""
    from relore.serve import connections

    raw = json.loads(os.environ.pop(WORKER_SETTINGS_ENV))
    connections.configure(connections.Limits(**raw["connections"]))
    return create_app(
        Settings(
            raw["database_url"],
            tokens={token: frozenset(scopes) for token, scopes in raw["tokens"].items()},
            labels_path=raw["labels_path"],
            allowed_hosts=tuple(raw["allowed_hosts"]),
            session_key=bytes.fromhex(raw["session_key"]),
        )
    )


def run(
    database_url: str,
    *,
    host: str,
    port: int,
    env=None,
    trust_network: bool = False,
    workers: int | None = None,
) -> None:
    import uvicorn

    from relore.serve import connections

    env = os.environ if env is None else env
    workers = default_workers() if workers is None else workers
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--workers must be from 1 to {MAX_WORKERS}")
    limits = connections.limits_from_env(env)
    connections.configure(limits)
    tokens = auth.parse_tokens(env.get("RELORE_API_TOKENS"))
    auth.check_bind(host, tokens, trust_network)
    settings = Settings(
        database_url,
        tokens=tokens,
        labels_path=env.get("RELORE_LABELS_PATH") or None,
        allowed_hosts=auth.allowed_hosts(host, env.get("RELORE_ALLOWED_HOSTS")),
        session_key=rules_sessions.load_key(env),
    )
    mode = f"{len(tokens)} tokens" if tokens else "no tokens"
    processes = f", {workers} workers" if workers > 1 else ""
    print(
        f"relored serve: listening on http://{host}:{port} (version {__version__}, {mode}"
        f"{processes}; at most {limits.max_connections} connections each, a request read in "
        f"{limits.request_timeout_s:g}s)",
        flush=True,
    )
    # uvicorn's h11 protocol with a request-read deadline and a connection cap (a half-sent
    # request is closed, never held: serve/connections.py)
    guarded = {"http": connections.GuardedH11Protocol, "log_level": "warning"}
    if workers == 1:
        uvicorn.run(create_app(settings), host=host, port=port, **guarded)
        return
    os.environ[WORKER_SETTINGS_ENV] = json.dumps(
        {
            "database_url": settings.database_url,
            "tokens": {token: sorted(scopes) for token, scopes in tokens.items()},
            "labels_path": settings.labels_path,
            "allowed_hosts": list(settings.allowed_hosts),
            "session_key": settings.session_key.hex(),
            "connections": limits.as_dict(),
        }
    )
    uvicorn.run(
        "relore.serve.runner:worker_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        **guarded,
    )
