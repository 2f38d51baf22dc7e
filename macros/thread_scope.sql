{#-
    Incremental marts re-derive whole threads. thread_scope_changes() lists, per
    (repo_id, thread_number), the newest loaded_at among the given staging inputs loaded after
    `since` (a scalar subquery: the mart's high-water mark minus the lookback). Only those
    threads are re-derived; the mart then anti-joins rows that came out unchanged.

    inputs: list of (model name, thread column, loaded column).
-#}
{% macro thread_scope_changes(inputs, since) -%}
    {%- for model_name, thread_column, loaded_column in inputs %}
        {% if not loop.first %}union all{% endif %}
        select
            repo_id,
            {{ thread_column }} as thread_number,
            max({{ loaded_column }}) as changed_at
        from {{ ref(model_name) }}
        where {{ loaded_column }} > {{ since }}
        group by repo_id, {{ thread_column }}
    {%- endfor %}
{%- endmacro %}

{#- `since` for an incremental mart: its newest source_loaded_at minus the lookback. -#}
{% macro mart_since(target_column='source_loaded_at') -%}
    {{ bound_literal(high_water_query(target_column)) }}
{%- endmacro %}

{#- `exists` a row of `scope` for (repo_id, thread_number) of `alias`. -#}
{% macro in_thread_scope(scope, alias, number_column='thread_number') -%}
    exists (
        select 1
        from {{ scope }} as scope
        where
            scope.repo_id = {{ alias }}.repo_id
            and scope.thread_number = {{ alias }}.{{ number_column }}
    )
{%- endmacro %}
