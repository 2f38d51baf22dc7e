{#-
    A check snapshot configured with `compare_source_keys_only=true` compares its source only
    with the open versions of the same keys, not with every open version.

    dbt's staging query reads every open version (`snapshotted_data`) and joins it twice, so
    Postgres materialised all 1.2 million of them on disk on every build, also when the
    source held nothing: 3.5 of the 5 s documents_history took in a build with nothing new.
    Only keys the source holds can get a version (hard deletes are not tracked), so the CTE
    is narrowed to them. This adds one condition to dbt's own SQL; if a dbt release changes
    that SQL so the condition cannot be placed, compiling the snapshot fails and says so.
-#}
{% macro postgres__snapshot_staging_table(strategy, source_sql, target_relation) -%}
    {%- set staged = default__snapshot_staging_table(strategy, source_sql, target_relation) -%}
    {%- if not config.get('compare_source_keys_only') -%}
        {{ return(staged) }}
    {%- endif -%}
    {%- set keys = strategy.unique_key if strategy.unique_key is not string
        else [strategy.unique_key] -%}
    {%- set narrowed = modules.re.subn(
        '(snapshotted_data as \\(\\s*select \\*,[^()]*?\\sfrom '
        ~ modules.re.escape(target_relation | string) ~ '\\s+where)',
        '\\1 (' ~ keys | join(', ') ~ ') in (select ' ~ keys | join(', ')
        ~ ' from snapshot_query) and',
        staged,
    ) -%}
    {%- if narrowed[1] != 1 -%}
        {{ exceptions.raise_compiler_error(
            'snapshot_scope.sql: dbt ' ~ dbt_version ~ ' writes its snapshot staging query'
            ~ ' differently; compare_source_keys_only cannot narrow it (found '
            ~ narrowed[1] ~ ' places)') }}
    {%- endif -%}
    {{ return(narrowed[0]) }}
{%- endmacro %}
