{#-
    Code symbols named in prose.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_symbols_functions(s) -%}
    create or replace function {{ s }}.relore_symbol_form(token text) returns text
language sql immutable parallel safe as $fn$
    with parts as (
        select
            regexp_replace(btrim(token), '\(.*\)$', '') as name,
            btrim(token) ~ '\)$' as is_call
    )
    select name
    from parts
    where
        length(name) between 3 and 120
        and name ~ '^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$'
        -- every dotted segment two or more characters: e.g / i.e are prose
        and name !~ '(^|\.)[A-Za-z_](\.|$)'
        and (is_call or name ~ '[._]' or name ~ '[a-z][A-Z]')
        and not {{ s }}.relore_is_prose_path(name)
$fn$;

create or replace function {{ s }}.relore_symbols(markdown text) returns setof text
language sql immutable parallel safe as $fn$
    select distinct symbol
    from (
        select {{ s }}.relore_symbol_form(code[1]) as symbol
        -- each search only where its anchor is (a backtick, `()`): most text has neither
        from regexp_matches(
            case when strpos(markdown, '`') > 0 then markdown else '' end,
            '`([^`\n]{2,120})`',
            'g'
        ) as code
        union all
        select {{ s }}.relore_symbol_form(call[1] || '()')
        from regexp_matches(
            case when strpos(markdown, '()') > 0 then markdown else '' end,
            '(?:^|[^A-Za-z0-9_.`])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\(\)',
            'g'
        ) as call
    ) as found
    where symbol is not null
$fn$;
{%- endmacro %}
