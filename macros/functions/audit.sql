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
-- Each relation is read once, every string column counted in that one pass: a scan per
-- column read documents twenty times over (14 of a no-op build's 24 s at 1.2M documents).
-- That pass redacts each row once, its string columns joined by line breaks: a call costs
-- PostgreSQL's regex set-up (~50 us) before any character, so fourteen calls a row cost
-- most of the scan. Only when some row's joined text changes is the relation read again,
-- column by column, to count each column's leaks. Joined text changes whenever a column
-- alone would: a match inside a value still matches with a line break on either side (no
-- catalog pattern needs the start or end of the whole string where a line break fails it;
-- tests/integration/test_redaction.py checks every example between line breaks).
drop function if exists {{ s }}.relore_secret_leaks(text);
create or replace function {{ s }}.relore_secret_leaks(
    in_schema text default '{{ s }}', since xid8 default null
)
returns table (table_name text, column_name text, leaks bigint)
language plpgsql stable as $fn$
declare
    found record;
    newer text;
    joined bigint;
    counters text[];
    counts bigint[];
begin
    for found in
        select
            c.table_name::text as t,
            array_agg(c.column_name::text order by c.column_name) as columns,
            array_agg(c.text_of order by c.column_name) as texts,
            -- the joined pass reads a text column equal to the one before it (body_text is
            -- often body_markdown word for word) as null: its value is read once
            array_agg(
                case
                    when c.is_text and c.prior_is_text
                        then format('nullif(%I, %I)', c.column_name, c.prior_name)
                    else c.text_of
                end
                order by c.column_name
            ) as joined_texts,
            exists (
                select from information_schema.tables as t
                where
                    t.table_schema = c.table_schema and t.table_name = c.table_name
                    and t.table_type = 'BASE TABLE'
            ) as is_table
        from (
            select
                columns.table_schema,
                columns.table_name,
                columns.column_name,
                format(
                    case
                        when columns.data_type in ('text', 'character varying') then '%I'
                        when columns.data_type = 'ARRAY' then 'array_to_string(%I, chr(10))'
                        else '(select string_agg(v #>> ''{}'', chr(10)) from'
                            || ' jsonb_path_query(%I::jsonb, ''strict $.** ? (@.type() == "string")'')'
                            || ' as v)'
                    end,
                    columns.column_name
                ) as text_of,
                columns.data_type in ('text', 'character varying') as is_text,
                lag(columns.data_type in ('text', 'character varying')) over (
                    partition by columns.table_name order by columns.column_name
                ) as prior_is_text,
                lag(columns.column_name::text) over (
                    partition by columns.table_name order by columns.column_name
                ) as prior_name
            from information_schema.columns as columns
            where
                columns.table_schema = in_schema
                and (
                    columns.data_type in ('text', 'character varying', 'json', 'jsonb')
                    or (columns.data_type = 'ARRAY' and columns.udt_name in ('_text', '_varchar'))
                )
        ) as c
        group by c.table_schema, c.table_name
        order by 1
    loop
        -- A row is read when its xmin is `since` or younger (`since` may be a transaction
        -- that was still running when the mark was taken): its 32-bit distance from `since`
        -- is under 2^31. Not age(xmin): age() is parallel-restricted, and a filter on it ran
        -- the whole scan in one process (268 s where the parallel scan takes 142 s at 1.2M
        -- documents). A mark 2^30 transactions old is too far: the table is read whole.
        newer := case
            when since is not null and found.is_table and {{ xid_mark_recent('since') }}
                then format(
                    ' where {{ xid_at_or_after('xmin', '%s') }}',
                    xid(since)::text::bigint
                )
            else ''
        end;
        execute format(
            'select count(*) filter (where {{ s }}.relore_has_secret(concat_ws(chr(10), '
            || array_to_string(found.joined_texts, ', ') || '))) from %I.%I' || newer,
            in_schema, found.t
        ) into joined;
        if joined = 0 then
            counts := array_fill(0::bigint, array[array_length(found.columns, 1)]);
        else
            select array_agg(
                format('count(*) filter (where {{ s }}.relore_has_secret(%s))', text_of)
                order by n
            )
            into counters
            from unnest(found.texts) with ordinality as texts (text_of, n);
            execute format(
                'select array[' || array_to_string(counters, ', ') || ']::bigint[]'
                || ' from %I.%I' || newer,
                in_schema, found.t
            ) into counts;
        end if;
        for i in 1 .. array_length(found.columns, 1) loop
            table_name := found.t;
            column_name := found.columns[i];
            leaks := counts[i];
            return next;
        end loop;
    end loop;
end
$fn$;
{%- endmacro %}
