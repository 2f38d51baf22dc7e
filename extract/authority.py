"""Write access of the people who spoke in a repository.

``author_association`` says OWNER or COLLABORATOR only for direct grants; on an
organisation's repository the maintainers arrive as MEMBER, which means "not asked yet".
Without this pass the authoritative tier is empty there, which looks like a repository with
no maintainers rather than a bug. The answer goes to ``ops.collaborator_permissions``, which
dbt reads into the trust tier.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

import psycopg

from relore.extract.github_client import GitHubClient, GitHubError, NotFound
from relore.extract.landing import Repo

PASS_NAME = "authority"
PERMISSIONS = ("admin", "maintain", "write", "triage", "read", "none")
RECHECK_DAYS = 7


def logins_to_resolve(conn: psycopg.Connection, repo: Repo, recheck_days: int = RECHECK_DAYS):
    """Human authors whose association does not settle their access, not checked lately."""
    rows = conn.execute(
        """
        with authors as (
            select distinct
                coalesce(payload -> 'user' ->> 'login', payload -> 'author' ->> 'login') as login,
                coalesce(payload -> 'user' ->> 'type', payload -> 'author' ->> '__typename')
                    as user_type,
                coalesce(payload ->> 'author_association', payload ->> 'authorAssociation')
                    as association
            from raw.github_objects
            where repo_id = %(repo_id)s and not is_deleted
                and object_type in (
                    'issue', 'issue_comment', 'review_comment', 'review', 'review_graphql'
                )
        )
        select distinct a.login
        from authors as a
        left join ops.collaborator_permissions as p
            on p.repo_id = %(repo_id)s and p.login = a.login
        where a.login is not null
            and a.user_type is distinct from 'Bot'
            and a.login not like '%%[bot]'
            and a.association not in ('OWNER', 'COLLABORATOR')
            and (p.login is null or p.checked_at < now() - make_interval(days => %(days)s))
        order by a.login
        """,
        {"repo_id": repo.repo_id, "days": recheck_days},
    ).fetchall()
    return [r[0] for r in rows]


def permission_of(client: GitHubClient, repo: Repo, login: str) -> tuple[str, str | None]:
    try:
        body = client.get_json(
            f"repos/{repo.full_name}/collaborators/{quote(login, safe='')}/permission"
        )
    except NotFound:
        return "none", None
    role = body.get("role_name")
    permission = role if role in PERMISSIONS else body.get("permission", "none")
    return (permission if permission in PERMISSIONS else "none"), role


@dataclass
class AuthorityResult:
    pass_name: str = PASS_NAME
    checked: int = 0
    with_write: int = 0


def run_authority(
    conn: psycopg.Connection,
    client: GitHubClient,
    repo: Repo,
    progress: Callable[[str], None] = lambda _: None,
) -> AuthorityResult:
    result = AuthorityResult()
    logins = logins_to_resolve(conn, repo)
    for login in logins:
        try:
            permission, role = permission_of(client, repo, login)
        except GitHubError as exc:
            if exc.status == 403:
                raise GitHubError(
                    "reading collaborator permissions needs a token with push access "
                    "to the repository",
                    url=exc.url,
                    status=403,
                ) from exc
            raise
        with conn.transaction():
            conn.execute(
                """
                insert into ops.collaborator_permissions (repo_id, login, permission, role_name)
                values (%s, %s, %s, %s)
                on conflict (repo_id, login) do update
                    set permission = excluded.permission, role_name = excluded.role_name,
                        checked_at = clock_timestamp()
                """,
                (repo.repo_id, login, permission, role),
            )
        result.checked += 1
        result.with_write += permission in ("admin", "maintain", "write")
        progress(
            f"authority: {result.checked}/{len(logins)} authors, {result.with_write} with write"
        )
    return result
