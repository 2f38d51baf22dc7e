"""The database inside the embedded cluster: created, or adopted from the superuser
(an older release ran everything as ``postgres``), with the vector extension and the
reader's grants, then migrated as the writer."""

from __future__ import annotations

import contextlib

import psycopg
from psycopg import sql

from relore.operate import migrations
from relore.operate.postgres import DATABASE_NAME, SUPERUSER, WRITER, EmbeddedPaths, connect

# Objects the superuser made in a database before the writer existed (an older release ran
# everything as postgres): handed to the writer so it can migrate and rebuild them.
_ADOPT = r"""
do $adopt$
declare
    found record;
    writer text := {writer};
begin
    for found in
        select n.nspname from pg_namespace as n
        where n.nspowner = (select oid from pg_roles where rolname = {superuser})
            and n.nspname not like 'pg\_%' and n.nspname not in ('information_schema', 'public')
    loop
        execute format('alter schema %I owner to %I', found.nspname, writer);
    end loop;
    for found in
        select c.oid::regclass::text as name, c.relkind
        from pg_class as c
        join pg_namespace as n on n.oid = c.relnamespace
        where n.nspowner = (select oid from pg_roles where rolname = writer)
            and c.relowner <> (select oid from pg_roles where rolname = writer)
            and c.relkind in ('r', 'p', 'v', 'm', 'f', 'S')
            and not (c.relkind = 'S' and exists (
                select from pg_depend as d
                where d.objid = c.oid and d.classid = 'pg_class'::regclass
                    and d.deptype in ('a', 'i')
            ))
    loop
        execute format(
            'alter %s %s owner to %I',
            case found.relkind
                when 'v' then 'view' when 'm' then 'materialized view'
                when 'f' then 'foreign table' when 'S' then 'sequence' else 'table'
            end,
            found.name,
            writer
        );
    end loop;
    for found in
        select p.oid::regprocedure::text as name, p.prokind
        from pg_proc as p
        join pg_namespace as n on n.oid = p.pronamespace
        where n.nspowner = (select oid from pg_roles where rolname = writer)
            and p.proowner <> (select oid from pg_roles where rolname = writer)
    loop
        execute format(
            'alter %s %s owner to %I',
            case found.prokind when 'p' then 'procedure' when 'a' then 'aggregate'
                else 'function' end,
            found.name,
            writer
        );
    end loop;
end
$adopt$
"""


def _create_vector_extension(conn: psycopg.Connection) -> None:
    """pgvector for the semantic tier, made by the superuser (the extension is not trusted,
    so the writer cannot). A server build without it leaves the tier off; nothing else
    depends on it."""
    with contextlib.suppress(psycopg.errors.UndefinedFile, psycopg.errors.FeatureNotSupported):
        conn.execute("create extension if not exists vector")


def ensure_embedded_database(paths: EmbeddedPaths, name: str = DATABASE_NAME) -> str:
    """The database ``name``, owned by the writer (created, or adopted from the superuser),
    migrated as the writer. Returns the writer's URL for it."""
    with connect(paths.url(database="postgres"), autocommit=True) as conn:
        exists = conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone()
        verb = "alter database {} owner to {}" if exists else "create database {} owner {}"
        conn.execute(sql.SQL(verb).format(sql.Identifier(name), sql.Identifier(WRITER)))
    with connect(paths.url(database=name), autocommit=True) as conn:
        conn.execute(
            sql.SQL(_ADOPT).format(writer=sql.Literal(WRITER), superuser=sql.Literal(SUPERUSER))
        )
        _create_vector_extension(conn)
        with conn.cursor() as cur:  # as the superuser: the large-object and lock functions too
            migrations.close_reader_writes(cur)
        if conn.execute("select to_regnamespace('marts') is not null").fetchone()[0]:
            # what the writer creates in marts is readable by the reader (dbt's tables)
            conn.execute(
                sql.SQL(
                    "alter default privileges for role {} in schema marts "
                    "grant select on tables to {}"
                ).format(sql.Identifier(WRITER), sql.Identifier(migrations.READER_ROLE))
            )
    url = paths.writer_url(name)
    with connect(url, autocommit=True) as conn:
        migrations.migrate(conn)
    return url
