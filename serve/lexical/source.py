"""What the index is built from: SQL over the marts, read with the reader role.

The index holds a repository's live documents (``not is_deleted``), each with its thread's
signals. A refresh re-reads the threads written since its marks: ``written_at`` of the
documents, the threads and each signal mart is the writing build's transaction time, so every
rewrite (new text, a tier authority moved, a deletion, a thread closed, a thread's set of
files changed) moves it, and a no-op build moves nothing.

The marks assume one writer per mart at a time, as the loop's lock makes it (dbt writes a
mart in one transaction): two builds overlapping by hand could commit an older stamp after
a refresh read a newer one, and that thread would wait for its next write. The history
snapshot cannot assume it (macros/snapshot_scope.sql); the serving role could not check it
(pg_stat_activity hides the writer's sessions from it).
"""

from __future__ import annotations

from relore.serve.lexical.schema import FIELD_WEIGHTS, THREAD_FIELD_WEIGHTS


def _case(weights: dict[str, int]) -> str:
    return (
        "case weight "
        + " ".join(f"when '{name}' then {weight}" for name, weight in weights.items())
        + " else 1 end"
    )


_WEIGHT = _case(FIELD_WEIGHTS)
_THREAD_WEIGHT = _case(THREAD_FIELD_WEIGHTS)

# Each lexeme once per position (Postgres keeps up to 256 per lexeme), times its weight.
ROWS = f"""
select
    d.document_id,
    d.thread_number,
    d.trust_tier,
    lower(d.author_login) as author,
    extract(epoch from d.created_at)::bigint as created,
    t.github_state,
    t.is_merged,
    t.kind,
    (
        select string_agg(repeat(u.lexeme || ' ', w.n), '')
        from unnest(d.search_vector) as u (lexeme, positions, weights)
        cross join lateral (
            select sum({_WEIGHT})::int as n from unnest(u.weights) as x (weight)
        ) as w
    ) as lexemes,
    -- in the threads index the title counts once (a document holding it: the opening post's
    -- first chunk); null where the same as lexemes
    case when 'A' = any(
        select unnest(u.weights) from unnest(d.search_vector) as u (lexeme, positions, weights)
    ) then (
        select string_agg(repeat(u.lexeme || ' ', w.n), '')
        from unnest(d.search_vector) as u (lexeme, positions, weights)
        cross join lateral (
            select sum({_THREAD_WEIGHT})::int as n from unnest(u.weights) as x (weight)
        ) as w
    ) end as thread_lexemes
from marts.documents as d
join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
where d.repo_id = %(repo_id)s
    and not d.is_deleted
    and d.thread_number = any(%(threads)s::bigint[])
"""

# The marts a refresh follows, with the column naming a row's thread.
FOLLOWED = {
    "documents": "thread_number",
    "threads": "number",
    "thread_files": "thread_number",
    "thread_errors": "thread_number",
    "thread_tests": "thread_number",
    "thread_symbols": "thread_number",
}


# The newest write of each followed mart (nulls: never built), the marks a refresh moves to;
# and the database's identity: a database dropped and created again under the same name (or
# a copy made from a template) is another database, whose index is built anew.
def marks_of(repo: str) -> str:
    """The marks of the repository whose id ``repo`` (an SQL expression) is."""
    return (
        "select\n"
        + "".join(
            f"    (select max(written_at) from marts.{mart} where repo_id = {repo}) as {mart},\n"
            for mart in FOLLOWED
        )
        + "    (select oid::bigint from pg_database where datname = current_database())"
        + " as database_oid\n"
    )


MARKS = marks_of("%(repo_id)s")

# The threads written since the marks (a mark of each followed mart, by name).
CHANGED_THREADS = (
    "select array(\n"
    + "\n    union\n".join(
        f"    select {column} from marts.{mart}\n"
        f"    where repo_id = %(repo_id)s and written_at > %({mart})s"
        for mart, column in FOLLOWED.items()
    )
    + "\n) as threads\n"
)

DATABASE_OID = (
    "select oid::bigint as database_oid from pg_database where datname = current_database()"
)

# a repository's live documents, counted no further than %(limit)s (its place: own or shared)
LIVE_DOCUMENTS = """
select count(*) as documents from (
    select 1 from marts.documents
    where repo_id = %(repo_id)s and not is_deleted
    limit %(limit)s
) as held
"""

ALL_THREADS = """
select array(select number from marts.threads where repo_id = %(repo_id)s order by number)
    as threads
"""

# A thread's signals as the index carries them: (thread, kind, value).
SIGNALS = """
select thread_number, 'file' as kind, path as value from marts.thread_files
where repo_id = %(repo_id)s and thread_number = any(%(threads)s::bigint[])
union all
select thread_number, 'error', normal_form from marts.thread_errors
where repo_id = %(repo_id)s and thread_number = any(%(threads)s::bigint[])
union all
select thread_number, 'test', v.value from marts.thread_tests
cross join lateral (values (test_id), (test_name)) as v (value)
where repo_id = %(repo_id)s and v.value is not null
    and thread_number = any(%(threads)s::bigint[])
union all
select thread_number, 'symbol', symbol from marts.thread_symbols
where repo_id = %(repo_id)s and thread_number = any(%(threads)s::bigint[])
"""
