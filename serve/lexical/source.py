"""What the index is built from: SQL over the marts, read with the reader role.

The index holds a repository's live documents (``not is_deleted``). A refresh re-reads the
threads written since its marks: ``written_at`` of ``marts.documents`` and ``marts.threads``
is the writing build's transaction time, so every rewrite (new text, a tier authority
moved, a deletion, a thread closed) moves it, and a no-op build moves nothing.
"""

from __future__ import annotations

from relore.serve.lexical.schema import FIELD_WEIGHTS

_WEIGHT = (
    "case weight "
    + " ".join(f"when '{name}' then {weight}" for name, weight in FIELD_WEIGHTS.items())
    + " else 1 end"
)

# Each lexeme once per position (Postgres keeps up to 256 per lexeme), times its weight.
ROWS = f"""
select
    d.document_id,
    d.thread_number,
    d.trust_tier,
    lower(d.author_login) as author,
    extract(epoch from d.created_at)::bigint as created,
    t.state,
    t.is_merged,
    (
        select string_agg(repeat(u.lexeme || ' ', w.n), '')
        from unnest(d.search_vector) as u (lexeme, positions, weights)
        cross join lateral (
            select sum({_WEIGHT})::int as n from unnest(u.weights) as x (weight)
        ) as w
    ) as lexemes
from marts.documents as d
join marts.threads as t on t.repo_id = d.repo_id and t.number = d.thread_number
where d.repo_id = %(repo_id)s
    and not d.is_deleted
    and (%(threads)s::bigint[] is null or d.thread_number = any(%(threads)s))
"""

# What has been written since the marks (nulls: never built), and the marks to move to; and the
# database's identity: a database dropped and created again under the same name (or a copy
# made from a template) is another database, whose index is built anew.
MARKS = """
select
    (select max(written_at) from marts.documents where repo_id = %(repo_id)s) as documents,
    (select max(written_at) from marts.threads where repo_id = %(repo_id)s) as threads,
    (select oid::bigint from pg_database where datname = current_database()) as database_oid
"""

CHANGED_THREADS = """
select array(
    select thread_number from marts.documents
    where repo_id = %(repo_id)s and written_at > %(documents)s
    union
    select number from marts.threads
    where repo_id = %(repo_id)s and written_at > %(threads)s
) as threads
"""
