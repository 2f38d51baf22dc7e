{#-
    Commit shas named in prose.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}

{#- A line that says it names a commit (case-insensitive): a 40-hex word elsewhere is as
    likely a pasted key (a W&B key is 40 hex digits) as a commit. -#}
{% macro relore_commit_context() -%}
    \m(?:commits?|committed|sha1?|shas|merged?|merging|cherry-?pick(?:ed)?|reverts?|reverted|rebased?|fix(?:ed|es)?|head|revs?|revisions?|hash|landed|pushed|bisect(?:ed)?|introduced|regress(?:ed|ion)|git|checkout|tag(?:ged)?|blame|diff|upstream|bump(?:ed)?|pinned?)\M
{%- endmacro %}

{% macro relore_commits_functions(s) -%}
-- Every commit-looking word of a body, and whether the body says it is a commit (`said`):
-- a commit URL's sha and a short sha (7-12 hex with a digit and a letter) always say so; a
-- 40-hex word only on a line that says commit, sha, merged, cherry-pick ...
-- (relore_commit_context). A body with no 40-hex word is never split into lines.
create or replace function {{ s }}.relore_commit_mentions(body text)
returns table (sha text, said boolean)
language sql immutable parallel safe as $fn$
    select lower(found.sha), bool_or(found.said)
    from (
        select word[1] as sha, true as said
        from regexp_matches(
            coalesce(body, ''),
            '(?:^|[^0-9A-Za-z_#/.:@-])([0-9a-f]{7,12})(?![0-9A-Za-z_@-])',
            'g'
        ) as word
        union all
        select word[1], line ~* '{{ relore_commit_context() }}'
        from regexp_split_to_table(coalesce(body, ''), '\n') as line
        cross join lateral regexp_matches(
            line, '(?:^|[^0-9A-Za-z_#/.:@-])([0-9a-fA-F]{40})(?![0-9A-Za-z_@-])', 'g'
        ) as word
        where body ~ '[0-9a-fA-F]{40}'
        union all
        select url[1], true
        from regexp_matches(coalesce(body, ''), '/commits?/([0-9a-fA-F]{7,40})\M', 'g') as url
    ) as found
    where
        found.sha ~ '[0-9]'
        and found.sha ~ '[a-fA-F]'
        -- 1e10000 is a number
        and found.sha !~ '^[0-9]+e[0-9]+$'
    group by lower(found.sha)
$fn$;

-- The commits a body says it names (relore_commit_mentions' `said` ones).
create or replace function {{ s }}.relore_commit_shas(body text) returns setof text
language sql immutable parallel safe as $fn$
    select mention.sha from {{ s }}.relore_commit_mentions(body) as mention where mention.said
$fn$;
{%- endmacro %}
