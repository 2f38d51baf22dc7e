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
    {%- set word = '(?:^|[^0-9A-Za-z_#/.:@-])([0-9a-fA-F]{40})(?![0-9A-Za-z_@-])' -%}
-- A commit a body names: a commit URL's sha, a short sha (7-12 hex with a digit and a
-- letter), or a 40-hex word on a line that says commit, sha, merged, cherry-pick ...
-- (relore_commit_context). A body with no 40-hex word is never split into lines.
create or replace function {{ s }}.relore_commit_shas(body text) returns setof text
language sql immutable parallel safe as $fn$
    select distinct lower(sha)
    from (
        select word[1] as sha
        from regexp_matches(
            coalesce(body, ''),
            '(?:^|[^0-9A-Za-z_#/.:@-])([0-9a-f]{7,12})(?![0-9A-Za-z_@-])',
            'g'
        ) as word
        union all
        select word[1]
        from regexp_split_to_table(coalesce(body, ''), '\n') as line
        cross join lateral regexp_matches(line, '{{ word }}', 'g') as word
        where body ~ '[0-9a-fA-F]{40}' and line ~* '{{ relore_commit_context() }}'
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

-- The 40-hex words of a body that relore_commit_shas leaves out (no commit said on their
-- line): thread_commits keeps one only when the thread's pull request or reviews name it.
create or replace function {{ s }}.relore_bare_shas(body text) returns setof text
language sql immutable parallel safe as $fn$
    select distinct lower(word[1])
    from regexp_split_to_table(coalesce(body, ''), '\n') as line
    cross join lateral regexp_matches(line, '{{ word }}', 'g') as word
    where
        body ~ '[0-9a-fA-F]{40}'
        and line !~* '{{ relore_commit_context() }}'
        and word[1] ~ '[0-9]'
        and word[1] ~ '[a-fA-F]'
$fn$;
{%- endmacro %}
