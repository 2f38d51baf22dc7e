{#-
    Every rule that turns text into something stored is ONE SQL function, created by the dbt
    project (on-run-start) in the served schema, so serve/ applies the very same function to a
    caller's --error / --file / --test / --symbol input and the two sides of a filter cannot
    drift. Models call them through relore_fn('name'); the reader role may EXECUTE them.

      relore_redact(text)                 secrets -> [REDACTED:<kind>] (idempotent; the catalog
                                          in macros/relore_secret_catalog.sql)
      relore_secret_catalog()             jsonb: the catalog, rules and examples
      relore_has_secret(text)             true when relore_redact would change the text
      relore_markdown_to_text(text)       macro markdown_to_text as a function
      relore_chunks(text, int)            markdown split on paragraph boundaries, ~N chars each
      relore_path_normal_form(text)       separators, drive, ./, site-packages, :line suffixes
      relore_path_aliases(repo_id, text[]) setof text: the paths and every other name their
                                          file had (marts.path_aliases, either side longer)
      relore_is_prose_path(text)          the heuristic for a token in prose (never for
                                          GitHub's own file lists or review anchors)
      relore_prose_paths(text)            setof normalised paths found in prose
      relore_symbol_form(text)            `Foo.bar()` -> Foo.bar; null when not an identifier
      relore_symbols(markdown)            setof symbols in inline code and `name()` calls
      relore_commit_shas(text)            setof 40-hex and 7-12-hex commit-looking words
      relore_error_normal_form(text)      one error line: addresses, absolute paths, numbers
      relore_error_lines(text)            table(error_class, normal_form) per error line
      relore_test_id_form(text)           a pytest node id, normalised
      relore_test_ids(text)               table(test_id, test_file, test_name, is_failed)
      relore_links(text, own_repo)        table(link_kind, target_repo, target_number)
      relore_secret_leaks(schema, since)  per string column of a schema (text, arrays, JSON),
                                          values holding a secret (table rows newer than since)
-#}

{% macro relore_function_schema() -%}
    {{ var('relore_function_schema', 'marts') }}
{%- endmacro %}

{% macro relore_fn(name) -%}
    {{ relore_function_schema() }}.relore_{{ name }}
{%- endmacro %}

{% macro create_relore_functions() -%}
    {%- set s = relore_function_schema() -%}
    create schema if not exists {{ s }};

-- Redaction: the catalog (macros/relore_secret_catalog.sql) as one function. Its entries
-- run in order, in buckets: a bucket runs only when the text holds one of its entries'
-- keywords (one case-insensitive match per bucket: PostgreSQL's regex cost grows faster than
-- the number of words, so several matches of twenty words cost less than one of a hundred
-- and fifty, and far less than as many strpos calls) or matches a guard, and an entry of
-- the bucket only when the text holds one of its own. Most text runs no replacement.
create or replace function {{ s }}.relore_redact(input text) returns text
language plpgsql immutable parallel safe as $fn$
declare
    folded text;
    output text := input;
begin
    if input is null then
        return null;
    end if;
    {% for bucket in relore_secret_catalog() | batch(relore_secret_bucket_size()) -%}
    if {{ relore_secret_prefilter(bucket, 'output') }} then
        folded := lower(output);
        {% for entry in bucket -%}
        -- {{ entry['kind'] }}{{ ': ' ~ entry['note'] if entry['note'] }}
        if {% if entry['guard'] -%}
            output ~ '{{ entry['guard'] | replace("'", "''") }}'
        {%- else -%}
            {%- for keyword in entry['keywords'] -%}
                strpos(folded, '{{ keyword | replace("'", "''") }}') > 0{{ ' or ' if not loop.last }}
            {%- endfor -%}
        {%- endif %} then
            output := regexp_replace(
                output, '{{ entry['pattern'] | replace("'", "''") }}',
                '{{ entry['replace'] | replace("'", "''") }}', '{{ entry['flags'] }}'
            );
        end if;
        {% endfor -%}
    end if;
    {% endfor -%}
    return output;
end
$fn$;

create or replace function {{ s }}.relore_has_secret(input text) returns boolean
language sql immutable parallel safe as $fn$
    select input is not null and {{ s }}.relore_redact(input) <> input
$fn$;

-- The catalog itself, for tests/ and benchmarks/ (and anyone asking what is redacted).
create or replace function {{ s }}.relore_secret_catalog() returns jsonb
language sql immutable parallel safe as $fn$
    select '{{ tojson(relore_secret_catalog()) | replace("'", "''") }}'::jsonb
$fn$;

create or replace function {{ s }}.relore_markdown_to_text(markdown text) returns text
language sql immutable parallel safe as $fn$
    select {{ markdown_to_text('markdown') }}
$fn$;

create or replace function {{ s }}.relore_chunks(markdown text, target integer default 1500)
returns table (chunk_index integer, chunk text)
language plpgsql immutable parallel safe as $fn$
declare
    paragraph text;
    buffer text := '';
    piece text;
    cut integer;
    n integer := 0;
begin
    if markdown is null then
        return;
    end if;
    if length(markdown) <= target then
        chunk_index := 0; chunk := markdown; return next;
        return;
    end if;
    foreach paragraph in array regexp_split_to_array(markdown, '\n[ \t]*\n') loop
        paragraph := btrim(paragraph, E'\n');
        continue when btrim(paragraph) = '';
        -- A paragraph longer than a chunk is cut at its last line break (else space) in reach.
        while length(paragraph) > target loop
            piece := left(paragraph, target);
            cut := target + 1 - coalesce(nullif(position(E'\n' in reverse(piece)), 0), target + 1);
            if cut < target / 2 then
                cut := target + 1 - coalesce(nullif(position(' ' in reverse(piece)), 0), 1);
            end if;
            if buffer <> '' then
                chunk_index := n; chunk := buffer; return next;
                n := n + 1; buffer := '';
            end if;
            chunk_index := n; chunk := rtrim(left(paragraph, cut)); return next;
            n := n + 1;
            paragraph := ltrim(substr(paragraph, cut + 1), E' \n');
        end loop;
        if buffer = '' then
            buffer := paragraph;
        elsif length(buffer) + 2 + length(paragraph) <= target then
            buffer := buffer || E'\n\n' || paragraph;
        else
            chunk_index := n; chunk := buffer; return next;
            n := n + 1; buffer := paragraph;
        end if;
    end loop;
    if btrim(buffer) <> '' then
        chunk_index := n; chunk := buffer; return next;
    end if;
end
$fn$;

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
            or wanted.path like '%/' || aliases.path
            or aliases.path like '%/' || wanted.path
    where in_repo_id is null or aliases.repo_id = in_repo_id
$fn$;
reset check_function_bodies;

create or replace function {{ s }}.relore_is_prose_path(token text) returns boolean
language sql immutable parallel safe as $fn$
    select coalesce(
        token ~ '^/?[A-Za-z0-9_~@+-][A-Za-z0-9_.~@+/-]*$'
        and token !~ '^v?[0-9]+(\.[0-9]+)+([a-z]+[0-9]*)?$'
        and token !~* '^(www\.|([a-z0-9-]+\.)+(com|org|net|io|dev|ai|co|edu|gov|app|sh)(/|$))'
        and token ~* ('\.(py|pyi|pyx|pxd|ipynb|js|jsx|ts|tsx|mjs|cjs|json|jsonl|yaml|yml|toml'
            || '|ini|cfg|conf|md|rst|txt|c|h|cc|cpp|cxx|hpp|hh|cu|cuh|rs|go|java|kt|scala|rb'
            || '|php|cs|swift|mm|sh|bash|zsh|ps1|bat|sql|html|htm|css|scss|vue|svelte|xml'
            || '|gradle|lock|proto|dart|lua|jl|pl|ex|exs|erl|hs|ml|clj|tf|mk|cmake|env|csv'
            || '|tsv|log|patch|diff|svg|png|jpg|jpeg|gif)$')
        -- without a slash, one dot only: `a.b.c`, `os.path.join`, `torch.nn.py` are names
        and (token ~ '/' or token ~ '^[^.]+\.[^.]+$')
        and token !~ '\.\.',
        false
    )
$fn$;

create or replace function {{ s }}.relore_prose_paths(body text) returns setof text
language sql immutable parallel safe as $fn$
    select distinct {{ s }}.relore_path_normal_form(token)
    from regexp_split_to_table(coalesce(body, ''), '[[:space:]`"''(),;<>{}|*=]+') as token
    where
        token !~ '://'
        and {{ s }}.relore_is_prose_path({{ s }}.relore_path_normal_form(token))
$fn$;

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
        from regexp_matches(coalesce(markdown, ''), '`([^`\n]{2,120})`', 'g') as code
        union all
        select {{ s }}.relore_symbol_form(call[1] || '()')
        from regexp_matches(
            coalesce(markdown, ''),
            '(?:^|[^A-Za-z0-9_.`])([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\(\)',
            'g'
        ) as call
    ) as found
    where symbol is not null
$fn$;

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

create or replace function {{ s }}.relore_error_normal_form(line text) returns text
language plpgsql immutable parallel safe as $fn$
declare
    body text;
    part text;
    result text := '';
begin
    body := btrim(regexp_replace(coalesce(line, ''), '^[ \t]*(E[ \t]+)?', ''));
    if body = '' then
        return null;
    end if;
    body := regexp_replace(body, '0x[0-9a-fA-F]+', '0x?', 'g');
    -- an absolute path (POSIX or Windows, quoted or not) becomes its basename
    body := regexp_replace(
        body,
        '(?:[A-Za-z]:)?[\\/](?:[^\\/[:space:]''"]+[\\/])+([^\\/[:space:]''":,]+)',
        '\1',
        'g'
    );
    -- numbers become N outside quotes; a quoted value is kept as written
    for part in
        select piece[1]
        from regexp_matches(body, '(''[^'']*''|"[^"]*"|[^''"]+|[''"])', 'g') as piece
    loop
        if length(part) > 1 and left(part, 1) in ('''', '"') then
            result := result || part;
        else
            result := result || regexp_replace(part, '\m[0-9]+(\.[0-9]+)*\M', 'N', 'g');
        end if;
    end loop;
    return left(regexp_replace(result, '[[:space:]]+', ' ', 'g'), 500);
end
$fn$;

create or replace function {{ s }}.relore_error_lines(body text)
returns table (error_class text, normal_form text)
language sql immutable parallel safe as $fn$
    select distinct
        coalesce(found[2], split_part(found[1], ':', 1)),
        {{ s }}.relore_error_normal_form(found[1])
    from regexp_matches(
        coalesce(body, ''),
        '^[ \t]*(?:E[ \t]+)?(((?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:[A-Z][A-Za-z0-9_]*(?:Error|Exception|Warning)))(?::[ \t].*|:)?|(?:Exception|Error): .*)$',
        'gn'
    ) as found
    where found[1] is not null
$fn$;

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
        from regexp_matches(
            coalesce(body, ''),
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

create or replace function {{ s }}.relore_links(body text, own_repo text)
returns table (link_kind text, target_repo text, target_number integer)
language sql immutable parallel safe as $fn$
    with found as (
        select
            'closes' as kind,
            coalesce(nullif(m[2], ''), m[4]) as repo,
            coalesce(m[3], m[5]) as num
        from regexp_matches(
            coalesce(body, ''),
            '\m(close[sd]?|fix(?:e[sd])?|resolve[sd]?):?[ \t]+(?:([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#([0-9]{1,9})|https?://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/(?:issues|pull)/([0-9]{1,9}))\M',
            'gi'
        ) as m
        union all
        select 'mentions', nullif(m[1], ''), m[2]
        from regexp_matches(
            coalesce(body, ''),
            '(?:^|[^A-Za-z0-9_/&#.-])((?:[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?)#([0-9]{1,9})\M',
            'g'
        ) as m
        union all
        select 'mentions', m[1], m[2]
        from regexp_matches(
            coalesce(body, ''),
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
        -- age() counts back from now: a row is newer than `since` when its xmin is younger.
        -- A mark 2^30 transactions old is too far for 32-bit ages: the table is read whole.
        newer := case
            when since is not null and found.is_table and age(xid(since)) < 1073741824
                then format('age(xmin) < age(%L::xid) and ', xid(since))
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

do $grant$
begin
    if exists (select from pg_roles where rolname = 'relore_reader') then
        grant usage on schema {{ s }} to relore_reader;
        grant execute on all functions in schema {{ s }} to relore_reader;
    end if;
end
$grant$;
{%- endmacro %}

{#- `dbt run-operation install_relore_functions`: (re)create the functions without a build. -#}
{% macro install_relore_functions() -%}
    {% do run_query(create_relore_functions()) %}
{%- endmacro %}
