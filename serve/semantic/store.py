"""Where the semantic tier's vectors are, and whether this database can hold them.

``relored embed`` writes ``semantic.embeddings`` (one vector per repository, model and text
hash) and ``semantic.marks``; ``marts.semantic_passages`` (dbt) says which passage of which
thread a hash is. The service reads the three with the reader role; a vector whose passage
changed or went away no longer joins, so it is never served even before the job retires it.
"""

from __future__ import annotations

HAS_VECTOR = "select exists (select 1 from pg_extension where extname = 'vector')"

COVERAGE = """
select
    (select count(distinct p.text_hash) from marts.semantic_passages as p
     where p.repo_id = %(repo_id)s) as passages,
    (select count(*) from semantic.embeddings as e
     where e.repo_id = %(repo_id)s and e.model_key = %(model_key)s
         and exists (select 1 from marts.semantic_passages as p
                     where p.repo_id = e.repo_id and p.text_hash = e.text_hash)) as embedded,
    (select m.changed_at from semantic.marks as m
     where m.repo_id = %(repo_id)s and m.model_key = %(model_key)s) as changed_at
"""

# whether any of the repositories holds vectors of the model
MARK = """
select changed_at from semantic.marks
where repo_id = any(%(repo_ids)s::bigint[]) and model_key = %(model_key)s
limit 1
"""

DIMENSION = """
select a.atttypmod
from pg_attribute as a
where a.attrelid = 'semantic.embeddings'::regclass and a.attname = 'embedding'
"""


def has_vector(conn) -> bool:
    return bool(conn.execute(HAS_VECTOR).fetchone()[0])


def vector_dimension(conn) -> int:
    return int(conn.execute(DIMENSION).fetchone()[0])


def vector_literal(vector) -> str:
    """A float32 vector as pgvector's text input: each value's shortest repr as a double,
    which parses back to the same float32."""
    return "[" + ",".join(repr(x) for x in vector.tolist()) + "]"
