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
    Which source rows a snapshot compares: those written by a transaction its last read
    could not see. A row is stamped (`stamp_column`) with its writing transaction's start
    and carries that transaction's id (`xid_column`, xmin). Every row the last read did not
    see was written by a transaction that was still running when the read began, or began
    later. So, of the read mark snapshot_read_mark recorded just before that read:

    - the id: a row whose transaction is older than the oldest then running was seen;
    - the start: no such row is stamped before the earliest start among the sessions then
      running that can write the source. The stamp's index finds the rest. When some such
      session's start was hidden from the build's role (another role's session: a
      superuser's), or on a mark from before starts were kept, the bound is the newest
      version less `lookback`, as before the mark.

    The lookback alone re-compared every row written within it: the whole table in every
    build in the quarter hour after a full one (11 to 13 s at 1.2 million documents). With
    the id only, the rows of that quarter hour were still read, to be dropped (3.6 s).
    Empty (compare everything) on a first run. A mark 2^30 transactions old or more is not
    used (the 32-bit distance would wrap). Read now and written in as literals, which the
    planner can see.
-#}
{% macro snapshot_scope(stamp_column, xid_column, lookback) -%}
    {%- if not execute or load_relation(this) is none -%}
        {{- return('') -}}
    {%- endif -%}
    {%- set conditions = [] -%}
    {%- set marks = adapter.get_relation(
        database=target.database, schema='relore_build', identifier='snapshot_marks') -%}
    {%- if marks is not none -%}
        {%- set found = run_query(
            "select xid(read_from)::text, read_since::text from " ~ marks
            ~ " where snapshot = '" ~ this.identifier
            ~ "' and " ~ xid_mark_recent('read_from')) -%}
        {%- if found.rows | length == 1 -%}
            {%- if found.rows[0][1] is not none -%}
                {%- do conditions.append(
                    stamp_column ~ " >= '" ~ found.rows[0][1] ~ "'::timestamptz") -%}
            {%- endif -%}
            {%- do conditions.append(xid_at_or_after(xid_column, found.rows[0][0])) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if conditions | length < 2 -%}
        {%- do conditions.insert(0, stamp_column ~ ' > '
            ~ bound_literal(high_water_query('dbt_updated_at', lookback)) | trim) -%}
    {%- endif -%}
    {{- return(conditions | join(' and ')) -}}
{%- endmacro %}

{#-
    A snapshot's pre-hook (inside its transaction, before its read): the oldest transaction
    still running, and the earliest start among the other sessions now in a transaction
    that can write `source_model` (null when such a session's start is hidden from this
    role). Taken before the read, both are never later than the read's own. Rolled back
    with a failed snapshot.
-#}
{% macro snapshot_read_mark(source_model) -%}
    {%- set source = '' -%}
    {%- if execute -%}
        {%- set node = graph.nodes['model.' ~ project_name ~ '.' ~ source_model] -%}
        {%- set source = adapter.quote(node.schema) ~ '.' ~ adapter.quote(node.alias) -%}
    {%- endif -%}
    insert into relore_build.snapshot_marks (snapshot, read_from, read_since)
    select
        '{{ this.identifier }}',
        pg_snapshot_xmin(pg_current_snapshot()),
        case
            -- another role's session shows no state (nor start, nor backend type)
            when count(*) filter (where activity.state is null) = 0
                then least(now(), min(activity.xact_start))
        end
    from pg_stat_activity as activity
    where
        activity.datname = current_database()
        and activity.pid != pg_backend_pid()
        -- no role: autovacuum and other server processes, which write no table's rows
        and activity.usesysid is not null
        and has_table_privilege(activity.usesysid, '{{ source }}', 'INSERT, UPDATE, DELETE')
    on conflict (snapshot) do update
        set read_from = excluded.read_from, read_since = excluded.read_since
{%- endmacro %}
