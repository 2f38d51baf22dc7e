{#-
    The every-column secret scan.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_audit_functions(s) -%}
-- Every string column of every table and view in a schema (text, varchar, text arrays,
-- JSON), and how many of its values still hold a secret: the singular test
-- assert_no_secret_survives_in_any_mart_text reads it.
-- With `since` (a transaction id), a table's rows written before it are skipped: they were
-- scanned by a build that passed (the regex is the cost, not the read). Views are read whole.
drop function if exists {{ s }}.relore_secret_leaks(text);
create or replace function {{ s }}.relore_secret_leaks(
    in_schema text default '{{ s }}', since xid8 default null
)
returns table (table_name text, column_name text, leaks bigint)
language plpgsql stable as $fn$
declare
    found record;
    newer text;
begin
    for found in
        select
            c.table_name::text as t,
            c.column_name::text as c,
            case
                when c.data_type in ('text', 'character varying') then '%I'
                when c.data_type = 'ARRAY' then 'array_to_string(%I, chr(10))'
                else '(select string_agg(v #>> ''{}'', chr(10)) from'
                    || ' jsonb_path_query(%I::jsonb, ''strict $.** ? (@.type() == "string")'') as v)'
            end as expression,
            exists (
                select from information_schema.tables as t
                where
                    t.table_schema = c.table_schema and t.table_name = c.table_name
                    and t.table_type = 'BASE TABLE'
            ) as is_table
        from information_schema.columns as c
        where
            c.table_schema = in_schema
            and (
                c.data_type in ('text', 'character varying', 'json', 'jsonb')
                or (c.data_type = 'ARRAY' and c.udt_name in ('_text', '_varchar'))
            )
        order by 1, 2
    loop
        table_name := found.t;
        column_name := found.c;
        -- age() counts back from now: a row is read when its xmin is `since` or younger
        -- (`since` may be a transaction that was still running when the mark was taken).
        -- A mark 2^30 transactions old is too far for 32-bit ages: the table is read whole.
        newer := case
            when since is not null and found.is_table and age(xid(since)) < 1073741824
                then format('age(xmin) <= age(%L::xid) and ', xid(since))
            else ''
        end;
        execute format(
            'select count(*) from %I.%I where ' || newer || '{{ s }}.relore_has_secret('
            || found.expression || ')',
            in_schema, found.t, found.c
        ) into leaks;
        return next;
    end loop;
end
$fn$;
{%- endmacro %}
