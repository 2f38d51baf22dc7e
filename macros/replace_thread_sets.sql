{#-
    Signal marts hold a SET of rows per thread. They are incremental with the custom strategy
    `replace_thread_sets`: the model emits, for each thread it re-derived, its rows plus one
    marker row (set_marker_column null, so a set that emptied is still named); the strategy
    compares each such thread's new set with the one stored (every column but the keys,
    source_loaded_at and written_at) and, for the threads whose set changed, deletes every
    stored row and inserts the new ones. A thread whose set emptied is cleared, one whose set
    did not change is not touched, so a build with nothing new writes nothing. The insert is
    the last statement: its row count is what vacuum_built_tables reads (macros/maintenance.sql).
-#}
{% macro get_incremental_replace_thread_sets_sql(arg_dict) -%}
{%- set target = arg_dict['target_relation'] -%}
{%- set temp = arg_dict['temp_relation'] -%}
{%- set keys = arg_dict['unique_key'] -%}
{%- set marker = config.get('set_marker_column') -%}
{%- set columns = arg_dict['dest_columns'] | map(attribute='quoted') | join(', ') -%}
{%- set values = [] -%}
{%- for column in arg_dict['dest_columns'] -%}
{%- if column.name not in keys + ['source_loaded_at', 'written_at'] -%}
{%- do values.append(column.quoted) -%}
{%- endif -%}
{%- endfor -%}
{%- set row_value = 'jsonb_build_array(' ~ values | join(', ') ~ ')::text' -%}
{%- set replaced = adapter.quote(temp.identifier ~ '__replaced') -%}
drop table if exists {{ replaced }};

    create temporary table {{ replaced }} on commit drop as
    with new_sets as (
        select
            {{ keys | join(', ') }},
            md5(
                string_agg({{ row_value }}, '|' order by {{ row_value }})
                    filter (where {{ marker }} is not null)
            ) as set_hash
        from {{ temp }}
        group by {{ keys | join(', ') }}
    ),

    old_sets as (
        select
{%- for key in keys %}
                existing.{{ key }},
{%- endfor %}
            md5(string_agg({{ row_value }}, '|' order by {{ row_value }})) as set_hash
        from {{ target }} as existing
        where exists (
            select 1 from new_sets
            where
{%- for key in keys %}
                    new_sets.{{ key }} = existing.{{ key }}{{ ' and' if not loop.last }}
{%- endfor %}
        )
        group by
{%- for key in keys %}
                existing.{{ key }}{{ ',' if not loop.last }}
{%- endfor %}
    )

    select
{%- for key in keys %}
            new_sets.{{ key }}{{ ',' if not loop.last }}
{%- endfor %}
    from new_sets
    left join old_sets
        on
{%- for key in keys %}
            new_sets.{{ key }} = old_sets.{{ key }}{{ ' and' if not loop.last }}
{%- endfor %}
    where new_sets.set_hash is distinct from old_sets.set_hash;

    delete from {{ target }} as target
    using {{ replaced }} as replaced
    where
{%- for key in keys %}
            target.{{ key }} = replaced.{{ key }}{{ ' and' if not loop.last }}
{%- endfor %};

    insert into {{ target }} ({{ columns }})
    select {{ columns }}
    from {{ temp }} as candidate
    where
        candidate.{{ marker }} is not null
        and exists (
            select 1 from {{ replaced }} as replaced
            where
{%- for key in keys %}
                    replaced.{{ key }} = candidate.{{ key }}{{ ' and' if not loop.last }}
{%- endfor %}
        )
{%- endmacro %}

{#-
    The tail of a signal mart: `signals` (repo_id, thread_number, *value_columns,
    source_loaded_at) -> `final`, each row with `written_at` (the writing build's transaction
    time: the search index re-reads threads written after its mark); on an incremental build,
    with one marker row per thread of `scope` (value_columns null) for the strategy above.
-#}
{% macro replace_thread_sets(signals, scope, value_columns) -%}
        final as (
            select
                *,
                current_timestamp as written_at
            from {{ signals }}
{%- if is_incremental() %}
            union all
            select
                {{ scope }}.repo_id,
                {{ scope }}.thread_number,
{%- for column in value_columns %}
                    null,
{%- endfor %}
                null,
                current_timestamp as written_at
            from {{ scope }}
{%- endif %}
        )
{%- endmacro %}

{#- config() for a signal mart keyed on (repo_id, thread_number, *key_columns). -#}
{% macro signal_mart_config(
    key_columns, lookup_columns=[], watermark_inputs=[]
) -%}
    {%- set indexes = [
        {'columns': ['repo_id', 'thread_number'] + key_columns, 'unique': True},
        {'columns': ['source_loaded_at']},
        {'columns': ['repo_id', 'written_at']},
    ] -%}
{%- for column in lookup_columns -%}
{%- do indexes.append({'columns': ['repo_id', column]}) -%}
{%- endfor -%}
    {{ return({
        'materialized': 'incremental',
        'incremental_strategy': 'replace_thread_sets',
        'unique_key': ['repo_id', 'thread_number'],
        'set_marker_column': key_columns[0],
        'on_schema_change': 'fail',
        'indexes': indexes,
        'watermark_inputs': watermark_inputs,
        'post_hook': ['{{ record_watermark() }}'],
        'meta': {'relore_tested_since': 'written_at'},
    }) }}
{%- endmacro %}

{#-
    The head of a signal mart: `scope` (threads whose documents, or other inputs, moved since
    the mart's high-water mark; every thread on a first build) and `scoped_documents` (their
    live documents). extra_inputs: more (model, thread column, loaded column) inputs.
-#}
{% macro signal_scope(extra_inputs=[], extra_scope=none) -%}
{%- if is_incremental() %}
        scope as (
            select
                repo_id,
                thread_number,
                max(changed_at) as changed_at
            from (
                {{ thread_scope_changes(
                    [('documents', 'thread_number', 'source_loaded_at')] + extra_inputs,
                    signal_since()
                ) }}
{%- if extra_scope %}
                    union all
                    select * from {{ extra_scope }}
                {%- endif %}
            ) as changes
            group by repo_id, thread_number
        ),
    {%- else %}
        scope as (
            select
                repo_id,
                number as thread_number,
                source_loaded_at as changed_at
            from {{ ref('threads') }}
        ),
{%- endif %}

    thread_loaded as (
        select
            scope.repo_id,
            scope.thread_number,
            greatest(max(all_documents.source_loaded_at), max(scope.changed_at)) as loaded_at
        from scope
        left join {{ ref('documents') }} as all_documents
            on
                scope.repo_id = all_documents.repo_id
                and scope.thread_number = all_documents.thread_number
        group by scope.repo_id, scope.thread_number
    ),

    scoped_documents as (
        select documents.*
        from {{ ref('documents') }} as documents
        where
            not documents.is_deleted
            and {{ in_thread_scope('scope', 'documents') }}
    ),
{%- endmacro %}
