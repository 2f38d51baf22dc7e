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
    {%- set lookback = lookback or var('relore_lookback', "interval '1 hour'") -%}
    {{ candidate_column }} > (
        select coalesce(max({{ target_column }}), '-infinity'::timestamptz) - {{ lookback }}
        from {{ this }}
    )
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
