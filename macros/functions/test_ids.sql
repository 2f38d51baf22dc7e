{#-
    pytest node ids: the normal form and the ids of a body.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_test_ids_functions(s) -%}
    create or replace function {{ s }}.relore_test_id_form(node_id text) returns text
language sql immutable parallel safe as $fn$
    select nullif(
        regexp_replace(
            regexp_replace(
                regexp_replace(replace(btrim(node_id), '\', '/'), '^[A-Za-z]:/', '/'),
                '^(\./)+', ''
            ),
            '^/.*?/(tests?/)', '\1'
        ),
        ''
    )
$fn$;

create or replace function {{ s }}.relore_test_ids(body text)
returns table (test_id text, test_file text, test_name text, is_failed boolean)
language sql immutable parallel safe as $fn$
    with found as (
        select
            bool_or(coalesce(node[1], '') in ('FAILED', 'ERROR')) as is_failed,
            {{ s }}.relore_test_id_form(node[2] || node[3] || coalesce(node[4], '')) as test_id
        -- every node id holds `.py::`: a body without one is not searched
        from regexp_matches(
            case when strpos(body, '.py::') > 0 then body else '' end,
            '(?:(FAILED|ERROR|PASSED|XFAIL|XPASS|SKIPPED)[ \t]+)?((?:[A-Za-z]:)?[A-Za-z0-9_./\\-]*[A-Za-z0-9_]\.py)((?:::[A-Za-z_][A-Za-z0-9_]*)+)(\[[^]\n]*\])?',
            'g'
        ) as node
        group by 2
    )
    select
        test_id,
        split_part(test_id, '::', 1),
        regexp_replace(test_id, '\[.*\]$', ''),
        is_failed
    from found
    where test_id is not null
$fn$;
{%- endmacro %}
