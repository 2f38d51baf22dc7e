{#-
    Commit shas named in prose.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_commits_functions(s) -%}
    create or replace function {{ s }}.relore_commit_shas(body text) returns setof text
language sql immutable parallel safe as $fn$
    select distinct lower(sha)
    from (
        select word[1] as sha
        from regexp_matches(
            coalesce(body, ''),
            '(?:^|[^0-9A-Za-z_#/.:@-])([0-9a-fA-F]{40}|[0-9a-f]{7,12})(?![0-9A-Za-z_@-])',
            'g'
        ) as word
        union all
        select url[1]
        from regexp_matches(coalesce(body, ''), '/commits?/([0-9a-fA-F]{7,40})\M', 'g') as url
    ) as found
    where
        sha ~ '[0-9]'
        and sha ~ '[a-fA-F]'
        -- 1e10000 is a number
        and sha !~ '^[0-9]+e[0-9]+$'
$fn$;
{%- endmacro %}
