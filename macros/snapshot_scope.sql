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

{#-
    Which source rows a snapshot compares: those stamped (`stamp_column`, the writing
    transaction's time) after its newest version less `lookback`, and written by a
    transaction that was still running or not begun when its last read began
    (`xid_column` at or after the read mark snapshot_read_mark records). Every other row
    was committed before that read and compared by it.

    The stamp bound alone re-compared every row written within the lookback of the last
    version: the whole table in every build in the quarter hour after a full one (11 to
    13 s at 1.2 million documents). The lookback still bounds the index's range; the mark
    drops what the last read already saw. Empty (compare everything) on a first run. A
    mark 2^30 transactions old or more is ignored (the 32-bit distance would wrap).
    Both bounds are read now and written in as literals, which the planner can see.
-#}
{% macro snapshot_scope(stamp_column, xid_column, lookback) -%}
    {%- if not execute or load_relation(this) is none -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set conditions = [
        stamp_column ~ ' > ' ~ bound_literal(high_water_query('dbt_updated_at', lookback)) | trim
    ] -%}
    {%- set marks = adapter.get_relation(
        database=target.database, schema='relore_build', identifier='snapshot_marks') -%}
    {%- if marks is not none -%}
        {%- set found = run_query(
            "select xid(read_from)::text from " ~ marks ~ " where snapshot = '"
            ~ this.identifier ~ "' and age(xid(read_from)) < 1073741824") -%}
        {%- if found.rows | length == 1 -%}
            {%- do conditions.append(xid_at_or_after(xid_column, found.rows[0][0])) -%}
        {%- endif -%}
    {%- endif -%}
    {{- return(conditions | join(' and ')) -}}
{%- endmacro %}

{#-
    A snapshot's pre-hook (inside its transaction, before its read): the oldest transaction
    still running. Taken before the read, it is never younger than the read's own: a row an
    older transaction wrote was visible to the read. Rolled back with a failed snapshot.
-#}
{% macro snapshot_read_mark() -%}
    insert into relore_build.snapshot_marks (snapshot, read_from)
    values ('{{ this.identifier }}', pg_snapshot_xmin(pg_current_snapshot()))
    on conflict (snapshot) do update set read_from = excluded.read_from
{%- endmacro %}
