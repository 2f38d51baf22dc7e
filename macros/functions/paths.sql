{#-
    File paths: the normal form, a file's other names, paths in prose.
    The catalog of every function and its file: macros/functions/relore_functions.sql.
    `s` is the schema they are created in (relore_function_schema()).
-#}
{#- The extensions a prose path ends in, as one alternation. -#}
{% macro prose_path_extensions() -%}
    py|pyi|pyx|pxd|ipynb|js|jsx|ts|tsx|mjs|cjs|json|jsonl|yaml|yml|toml
    {{- '|ini|cfg|conf|md|rst|txt|c|h|cc|cpp|cxx|hpp|hh|cu|cuh|rs|go|java|kt|scala|rb' -}}
    {{- '|php|cs|swift|mm|sh|bash|zsh|ps1|bat|sql|html|htm|css|scss|vue|svelte|xml' -}}
    {{- '|gradle|lock|proto|dart|lua|jl|pl|ex|exs|erl|hs|ml|clj|tf|mk|cmake|env|csv' -}}
    {{- '|tsv|log|patch|diff|svg|png|jpg|jpeg|gif' -}}
{%- endmacro %}

{% macro relore_paths_functions(s) -%}
    create or replace function {{ s }}.relore_path_normal_form(path text) returns text
language plpgsql immutable parallel safe as $fn$
declare
    result text := rtrim(ltrim(btrim(path), '(<[''"`'), ')>]''"`.,;:!?');
begin
    result := replace(result, '\', '/');
    result := regexp_replace(result, '^[A-Za-z]:/', '/');
    result := regexp_replace(result, '/{2,}', '/', 'g');
    result := regexp_replace(result, '^(\./)+', '');
    result := regexp_replace(result, '^/?(.*/)?(site|dist)-packages/', '');
    result := regexp_replace(result, '(:[0-9]+)+$|#L[0-9]+(-L[0-9]+)?$', '');
    return nullif(result, '');
end
$fn$;

-- The caller's normalised paths and every other name their file had in a repository's
-- history (marts.path_aliases; in_repo_id null: any repository's), matched the way --file
-- matches thread_files: exactly, or with either side the longer (an absolute path from a
-- traceback, a relative one in the index). Created before the mart exists on a first
-- build, so the body is checked when called, not now. (It took the repository's name
-- before serve resolved a name to its repo_id once per request.)
drop function if exists {{ s }}.relore_path_aliases(text, text[]);
set check_function_bodies = off;
create or replace function {{ s }}.relore_path_aliases(in_repo_id bigint, paths text[])
returns setof text
language sql stable parallel safe as $fn$
    select wanted.path
    from unnest(paths) as wanted (path)
    where wanted.path is not null
    union
    select aliases.alias_path
    from unnest(paths) as wanted (path)
    inner join marts.path_aliases as aliases
        on
            aliases.path = wanted.path
            or {{ s }}.relore_ends_with_part(wanted.path, aliases.path, '/')
            or {{ s }}.relore_ends_with_part(aliases.path, wanted.path, '/')
    where in_repo_id is null or aliases.repo_id = in_repo_id
$fn$;
reset check_function_bodies;

create or replace function {{ s }}.relore_is_prose_path(token text) returns boolean
language sql immutable parallel safe as $fn$
    select coalesce(
        token ~ '^/?[A-Za-z0-9_~@+-][A-Za-z0-9_.~@+/-]*$'
        and token !~ '^v?[0-9]+(\.[0-9]+)+([a-z]+[0-9]*)?$'
        and token !~* '^(www\.|([a-z0-9-]+\.)+(com|org|net|io|dev|ai|co|edu|gov|app|sh)(/|$))'
        and token ~* '\.({{ prose_path_extensions() }})$'
        -- without a slash, one dot only: `a.b.c`, `os.path.join`, `torch.nn.py` are names
        and (token ~ '/' or token ~ '^[^.]+\.[^.]+$')
        and token !~ '\.\.',
        false
    )
$fn$;

-- Every path relore_is_prose_path accepts ends in `.<extension>` (the normaliser only cuts
-- punctuation, `:line` and `#L..` after it), so only the words (runs between the separators)
-- holding one at a word's end are candidates: one search finds them, where splitting every
-- body into words and testing each cost most of the mart (at 1.2 million documents it once
-- spent minutes normalising every word, twice).
create or replace function {{ s }}.relore_prose_paths(body text) returns setof text
language sql immutable parallel safe as $fn$
    select distinct normal.path
    from regexp_matches(
        coalesce(body, ''),
        '[^[:space:]`"''(),;<>{}|*=]*\.(?:{{ prose_path_extensions() }})\M[^[:space:]`"''(),;<>{}|*=]*',
        'gi'
    ) as found (word)
    cross join lateral (
        select {{ s }}.relore_path_normal_form(found.word[1]) as path offset 0
    ) as normal
    where
        found.word[1] !~ '://'
        and {{ s }}.relore_is_prose_path(normal.path)
$fn$;
{%- endmacro %}
