{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id', 'number'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'number'], 'unique': True},
            {'columns': ['repo_id', 'thread_id']},
            {'columns': ['repo_id', 'updated_at']},
        ],
    )
}}

{%- set compared_columns = [
    'repo', 'thread_id', 'kind', 'state', 'is_merged', 'merged_at', 'title', 'author_login',
    'author_association', 'labels', 'created_at', 'updated_at', 'closed_at', 'comment_count',
    'url', 'is_deleted',
] %}

with

issues as (
    select * from {{ ref('stg_github__issues') }}
    {% if is_incremental() -%}
        where {{ incremental_window('loaded_at') }}
    {%- endif %}
),

threads as (
    select
        repo_id,
        repo,
        issue_id as thread_id,
        number,
        kind,
        state,
        merged_at is not null as is_merged,
        merged_at,
        title,
        author_login,
        author_association,
        labels,
        created_at,
        updated_at,
        closed_at,
        comment_count,
        html_url as url,
        is_deleted,
        loaded_at as source_loaded_at
    from issues
),

{% if is_incremental() -%}
    changed as (
        select * from threads
        where not {{ unchanged_in_this('threads', ['repo_id', 'number'], compared_columns) }}
    ),
{%- else -%}
    changed as (
        select * from threads
    ),
{%- endif %}

final as (
    select * from changed
)

select * from final
