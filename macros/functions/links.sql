{#-
    References to other threads: closes and mentions.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{% macro relore_links_functions(s) -%}
    create or replace function {{ s }}.relore_links(body text, own_repo text)
returns table (link_kind text, target_repo text, target_number integer)
language sql immutable parallel safe as $fn$
    with found as (
        select
            'closes' as kind,
            coalesce(nullif(m[2], ''), m[4]) as repo,
            coalesce(m[3], m[5]) as num
        -- each search only where its anchor is (`#`, a github.com URL): most text has neither
        from regexp_matches(
            case
                when strpos(body, '#') > 0 or strpos(lower(body), 'github.com') > 0 then body
                else ''
            end,
            '\m(close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \t]+(?:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#([0-9]{1,9})|https?://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/([0-9]{1,9}))\M',
            'gi'
        ) as m
        union all
        select 'mentions', nullif(m[1], ''), m[2]
        from regexp_matches(
            case when strpos(body, '#') > 0 then body else '' end,
            '(?:^|[^A-Za-z0-9_/&#.-])((?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?)#([0-9]{1,9})\M',
            'g'
        ) as m
        union all
        select 'mentions', m[1], m[2]
        from regexp_matches(
            case when strpos(body, 'github.com') > 0 then body else '' end,
            'https?://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/([0-9]{1,9})',
            'g'
        ) as m
    )
    select
        case when bool_or(kind = 'closes') then 'closes' else 'mentions' end,
        lower(coalesce(repo, own_repo)),
        num::integer
    from found
    where num::integer > 0
    group by 2, 3
$fn$;
{%- endmacro %}
