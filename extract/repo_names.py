"""Former repository names, resolved the way GitHub resolves them.

A pull request in ``huggingface/trl`` that says ``Fixes lvwerra/trl#434`` names this very
repository by the name it had before a rename; a link names its target by whatever name the
author typed. GitHub answers an old name with ``301 Moved Permanently`` to
``/repositories/{id}`` (the client follows it), so asking for the name once says which
repository it is now. Each name is recorded in ``ops.repo_names`` with the id and name
GitHub gave (or none: no such repository), and never asked again: the marts resolve a link
through it (``marts.repository_names``), and ``inflight`` counts such a claim.

Two ways a name arrives: the operator's own ``--repo`` (``resolve_repo`` already followed
the redirect: recorded free), and the names the last build's links hold that are neither a
current name nor recorded yet — at most ``ASKED_PER_RUN`` a run, so a repository whose
threads link to hundreds of others spends a bounded share of its rate limit on them.
"""

from __future__ import annotations

import psycopg

from relore.extract.github_client import GitHubClient, NotFound
from relore.extract.landing import Repo

ASKED_PER_RUN = 20

RECORD = """
insert into ops.repo_names (name, repo_id, full_name)
values (lower(%(name)s), %(repo_id)s, %(full_name)s)
on conflict (name) do update
    set repo_id = excluded.repo_id, full_name = excluded.full_name,
        checked_at = clock_timestamp()
"""

# Names the links of this repository hold that no indexed thread answered (target_repo_id
# is null), that are no repository's current name, and that were never asked.
UNKNOWN = """
select distinct l.target_repo
from marts.thread_links as l
where l.repo_id = %(repo_id)s
    and l.target_repo_id is null
    and not exists (select from ops.repos as r where lower(r.full_name) = l.target_repo)
    and not exists (select from ops.repo_names as n where n.name = l.target_repo)
order by l.target_repo
limit %(limit)s
"""


def record_asked_name(conn: psycopg.Connection, asked: str, repo: Repo) -> None:
    """The operator named the repository by a former name: keep it (GitHub redirected)."""
    if asked.lower() != repo.full_name.lower():
        params = {"name": asked, "repo_id": repo.repo_id, "full_name": repo.full_name}
        conn.execute(RECORD, params)


def resolve_link_names(conn: psycopg.Connection, client: GitHubClient, repo: Repo) -> int:
    """Ask GitHub for the names this repository's links hold that nothing resolved yet;
    return how many were asked. Before the first build there are no links: nothing."""
    if conn.execute("select to_regclass('marts.thread_links')").fetchone()[0] is None:
        return 0
    names = [
        row[0] for row in conn.execute(UNKNOWN, {"repo_id": repo.repo_id, "limit": ASKED_PER_RUN})
    ]
    for name in names:
        try:
            payload = client.get_json(f"repos/{name}")
        except NotFound:
            found = {"repo_id": None, "full_name": None}
        else:
            found = {"repo_id": int(payload["id"]), "full_name": payload["full_name"]}
        conn.execute(RECORD, {"name": name, **found})
    return len(names)
