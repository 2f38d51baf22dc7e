{#-
    The current version of every object of some types in raw.github_objects, for a staging
    model materialized as an incremental table keyed on (repo_id, <key_column>).

    raw is append-only: each changed payload is a new row and a deletion is a tombstone row
    (payload null). The current version of an object is its newest row (loaded_at, then
    row_id), across all the given object types (a review lands as REST `review` and as
    GraphQL `review_graphql` in one id space). Its `is_deleted` and `loaded_at` come from that
    row; its payload (and payload_type) from the newest row that was not a tombstone, so a
    deleted object keeps its last known content and readers filter on is_deleted.

    Incremental: only objects with a row loaded since the table's newest loaded_at minus the
    lookback are read, and of those only the ones whose newest row_id is not already staged,
    so a build with nothing new in raw reads a window and writes nothing.
-#}
{% macro latest_versions(object_types, key_column) -%}
    {%- set types = "'" ~ object_types | join("', '") ~ "'" -%}
    {%- set raw = source('github', 'github_objects') -%}
    with

    touched as (
        select
            repo_id,
            object_id,
            max(row_id) as newest_row_id
        from {{ raw }}
        where
            object_type in ({{ types }})
    {%- if is_incremental() %}
                and {{ incremental_window('loaded_at', 'loaded_at') }}
    {%- endif %}
        group by repo_id, object_id
    ),

    changed as (
        select * from touched
    {%- if is_incremental() %}
            where not exists (
                select 1
                from {{ this }} as existing
                where
                    existing.repo_id = touched.repo_id
                    and existing.{{ key_column }} = touched.object_id
                    and existing.version_row_id >= touched.newest_row_id
            )
    {%- endif %}
    )

    select
        newest.repo_id,
        newest.repo,
        newest.object_id,
        newest.thread_number,
        newest.row_id,
        newest.is_deleted,
        newest.loaded_at,
        last_payload.object_type as payload_type,
        last_payload.payload
    from changed
    cross join lateral (
        select version.*
        from {{ raw }} as version
        where
            version.repo_id = changed.repo_id
            and version.object_type in ({{ types }})
            and version.object_id = changed.object_id
        order by version.loaded_at desc, version.row_id desc
        limit 1
    ) as newest
    left join lateral (
        select
            version.object_type,
            version.payload
        from {{ raw }} as version
        where
            version.repo_id = changed.repo_id
            and version.object_type in ({{ types }})
            and version.object_id = changed.object_id
            and version.payload is not null
        order by version.loaded_at desc, version.row_id desc
        limit 1
    ) as last_payload on true
{%- endmacro %}

{#- config() for a staging table built by latest_versions. -#}
{% macro staging_table_config(key_column, thread_column='thread_number') -%}
    {{ return({
        'materialized': 'incremental',
        'incremental_strategy': 'delete+insert',
        'unique_key': ['repo_id', key_column],
        'on_schema_change': 'fail',
        'indexes': [
            {'columns': ['repo_id', key_column], 'unique': True},
            {'columns': ['loaded_at']},
        ] + ([{'columns': ['repo_id', thread_column]}] if thread_column else []),
    }) }}
{%- endmacro %}
