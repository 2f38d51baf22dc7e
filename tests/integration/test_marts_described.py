"""An analyst with psql reads what a mart and its columns mean from the database itself (#16).

Every mart and column is described in the dbt project; ``persist_docs`` writes those
descriptions as Postgres comments, so ``\\d+`` and any SQL client show them."""

from __future__ import annotations

import psycopg


def test_every_mart_and_its_columns_carry_their_description_in_postgres(indexed_world):
    with psycopg.connect(indexed_world.url) as conn:
        undescribed = conn.execute(
            """
            select c.relname
            from pg_class as c
            join pg_namespace as n on n.oid = c.relnamespace
            where n.nspname = 'marts' and c.relkind in ('r', 'v', 'm', 'p')
              and coalesce(obj_description(c.oid, 'pg_class'), '') = ''
            order by 1
            """
        ).fetchall()
        columns = conn.execute(
            """
            select c.relname || '.' || a.attname
            from pg_class as c
            join pg_namespace as n on n.oid = c.relnamespace
            join pg_attribute as a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
            where n.nspname = 'marts' and c.relname in ('threads', 'documents', 'thread_files')
              and coalesce(col_description(c.oid, a.attnum), '') = ''
            order by 1
            """
        ).fetchall()
    assert undescribed == [], f"marts without a comment: {undescribed}"
    assert columns == [], f"columns without a comment: {columns}"
