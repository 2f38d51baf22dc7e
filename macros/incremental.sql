{#-
    Helpers for incremental marts. A build with nothing new in raw must write zero rows, so
    an incremental run (1) reads only source versions loaded since the mart's high-water mark
    minus a lookback (an extract that committed late is not missed), and (2) drops every
    candidate whose derived columns equal the row already in the mart, so re-read unchanged
    rows are never rewritten by delete+insert.
-#}

{#- `candidate_column > max(target_column) in this - lookback`; everything on a first run. -#}
{% macro incremental_window(
    candidate_column, target_column='source_loaded_at', lookback=none
) -%}
    {{ candidate_column }} > {{ bound_literal(high_water_query(target_column, lookback)) }}
{%- endmacro %}

{#- The query of `this`'s newest target_column less the lookback ('-infinity' when empty). -#}
{% macro high_water_query(target_column='source_loaded_at', lookback=none) -%}
    {%- set lookback = lookback or var('relore_lookback', "interval '1 hour'") -%}
    {%- do return("select coalesce(max(" ~ target_column ~ "), '-infinity'::timestamptz) - "
        ~ lookback ~ " from " ~ this) -%}
{%- endmacro %}

{#-
    A window's bound (a query of one timestamptz), read when the model runs and written into
    its SQL as a literal. As a subquery it is an init plan, a value the planner cannot see:
    it guesses a third of the rows past it, and a build with 1,000 new rows out of 1.2
    million read all of raw and joined every staged row (2 s a staging model at 50,000
    threads). As a literal the planner reads the column's statistics, sees how few rows are
    past it and takes the index. Outside a model's run (parsing, a unit test) the subquery
    stays: the same value, read by Postgres instead.
-#}
{% macro bound_literal(query) -%}
    {%- if execute and model is mapping and model.get('resource_type') in ('model', 'snapshot') -%}
        {%- set value = run_query('select (' ~ query ~ ')::text').columns[0].values()[0] -%}
        {{- "'" ~ value ~ "'::timestamptz" if value is not none else 'null::timestamptz' -}}
    {%- else -%}
        ({{ query }})
    {%- endif -%}
{%- endmacro %}

{#-
    True when `this` already holds the candidate's key with the same compare_columns (with
    none, when it holds the key).
-#}
{% macro unchanged_in_this(candidate, unique_key, compare_columns) -%}
    {%- set conditions = [] -%}
    {%- for key in unique_key -%}
        {%- do conditions.append('existing.' ~ key ~ ' = ' ~ candidate ~ '.' ~ key) -%}
    {%- endfor -%}
    {%- set existing_columns = [] -%}
    {%- set candidate_columns = [] -%}
    {%- for column in compare_columns -%}
        {%- do existing_columns.append('existing.' ~ column) -%}
        {%- do candidate_columns.append(candidate ~ '.' ~ column) -%}
    {%- endfor -%}
    {%- if compare_columns -%}
        {%- do conditions.append(
            '(' ~ existing_columns | join(', ') ~ ') is not distinct from ('
            ~ candidate_columns | join(', ') ~ ')'
        ) -%}
    {%- endif -%}
    exists (
        select 1
        from {{ this }} as existing
        where
            {{ conditions | join(' and ') }}
    )
{%- endmacro %}
