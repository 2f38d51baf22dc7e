"""What dbt and ``relored embed`` derived from what landed: the build ran after the
last landing, authority was read, and the semantic tier covers the passages."""

from __future__ import annotations

import psycopg

from relore.operate.doctor.check import OK, WARN, Check, _age

# raw object types that marts.threads / marts.documents derive from: a newer row of these
# that no mart row reflects means a `dbt build` is owed.
DERIVED_TYPES = ("issue", "issue_comment", "review_comment", "review")


def _landed(conn: psycopg.Connection, repo_id: int | None = None) -> bool:
    """Whether raw holds any row the marts derive from (an index probe, not a scan)."""
    return conn.execute(
        "select exists (select 1 from raw.github_objects where object_type = any(%s) "
        "and (%s::bigint is null or repo_id = %s))",
        (list(DERIVED_TYPES), repo_id, repo_id),
    ).fetchone()[0]


def check_build(conn: psycopg.Connection, repos) -> list[Check]:
    """Raw rows newer than anything the marts derived: `dbt build` has not run since."""
    if not repos:
        return []
    present = [
        name
        for name in ("threads", "documents")
        if conn.execute("select to_regclass(%s) is not null", (f"marts.{name}",)).fetchone()[0]
    ]
    if not present:
        if not _landed(conn):
            return [Check(OK, "build", "nothing landed yet, nothing to build")]
        return [
            Check(
                WARN,
                "build",
                "raw holds rows but the marts have never been built",
                "run `dbt build` from the dbt project directory",
            )
        ]
    newest_derived = " union all ".join(
        f"select max(source_loaded_at) as at from marts.{name} where repo_id = %(r)s"
        for name in present
    )
    checks = []
    for repo_id, name in repos:
        built = conn.execute(
            f"select max(at) from ({newest_derived}) as d", {"r": repo_id}
        ).fetchone()[0]
        if built is None:
            if _landed(conn, repo_id):
                checks.append(
                    Check(
                        WARN,
                        f"build {name}",
                        "raw holds rows but the marts hold nothing for it",
                        "run `dbt build`",
                    )
                )
            else:
                checks.append(Check(OK, f"build {name}", "nothing landed yet"))
            continue
        # loaded_at is indexed: only the rows past the marts' newest are read.
        newer, newest_ago = conn.execute(
            """
            select count(*), extract(epoch from now() - max(loaded_at))::float8
            from raw.github_objects
            where loaded_at > %s and repo_id = %s and object_type = any(%s)
            """,
            (built, repo_id, list(DERIVED_TYPES)),
        ).fetchone()
        if newer:
            checks.append(
                Check(
                    WARN,
                    f"build {name}",
                    f"{newer} raw rows (newest landed {_age(newest_ago)}) are newer than "
                    "anything the marts derived",
                    "run `dbt build`; if one ran since, those rows changed nothing the marts "
                    "show (a reaction, an unchanged edit) and the next change clears this",
                )
            )
        else:
            checks.append(Check(OK, f"build {name}", "the marts derive every landed row"))
    return checks


def check_authority(conn: psycopg.Connection, repos) -> list[Check]:
    counts = dict(
        conn.execute(
            "select repo_id, count(*) from ops.collaborator_permissions group by repo_id"
        ).fetchall()
    )
    checks = []
    for repo_id, name in repos:
        resolved = counts.get(repo_id, 0)
        if resolved:
            checks.append(
                Check(OK, f"authority {name}", f"write access known for {resolved} authors")
            )
            continue
        # Nobody asked yet: is there anyone whose association does not settle it?
        pending = conn.execute(
            """
            select exists (
                select 1 from raw.github_objects
                where repo_id = %s and not is_deleted
                    and object_type in (
                        'issue', 'issue_comment', 'review_comment', 'review', 'review_graphql'
                    )
                    and coalesce(payload ->> 'author_association',
                        payload ->> 'authorAssociation') not in ('OWNER', 'COLLABORATOR')
            )
            """,
            (repo_id,),
        ).fetchone()[0]
        if pending:
            checks.append(
                Check(
                    WARN,
                    f"authority {name}",
                    "no author's write access has been asked, so the authoritative tier is "
                    "empty (MEMBER means 'not asked yet')",
                    f"run `relored extract authority --repo {name}` (needs a token with push "
                    "access)",
                )
            )
        else:
            checks.append(Check(OK, f"authority {name}", "no author needs asking"))
    return checks


def check_semantic(conn: psycopg.Connection, repos) -> list[Check]:
    """The semantic tier: off is fine (said, with how to turn it on); on but behind the
    passages dbt derived is a WARN (questions miss what was not embedded)."""
    from relore.serve.semantic import store

    name = "semantic tier"
    if not store.has_vector(conn):
        return [
            Check(
                OK,
                name,
                "off: this database has no pgvector (search answers by words only)",
                "to turn it on, a superuser runs `CREATE EXTENSION vector;`, then `relored embed`",
            )
        ]
    try:
        from relore.serve.semantic.encoder import Encoder
    except ImportError as exc:
        return [
            Check(
                OK,
                name,
                f"off: the semantic extra is not installed ({exc.name} is missing)",
                "to turn it on: pip install 'relore[semantic]', then `relored embed`",
            )
        ]
    ready = conn.execute(
        "select to_regclass('semantic.embeddings') is not null"
        " and to_regclass('marts.semantic_passages') is not null"
    ).fetchone()[0]
    if not ready:
        return [Check(OK, name, "off: nothing embedded yet", "run `relored embed` after dbt build")]
    model_key = Encoder().model_key
    checks = []
    for repo_id, repo in repos:
        passages, embedded, _ = conn.execute(
            store.COVERAGE, {"repo_id": repo_id, "model_key": model_key}
        ).fetchone()
        detail = f"{embedded:,} of {passages:,} passages embedded"
        if embedded < passages:
            checks.append(
                Check(WARN, f"{name} {repo}", detail, f"run `relored embed --repo {repo}`")
            )
        else:
            checks.append(Check(OK, f"{name} {repo}", detail))
    return checks
