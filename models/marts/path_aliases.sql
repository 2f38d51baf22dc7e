{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id', 'path', 'alias_path'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'path', 'alias_path'], 'unique': True},
            {'columns': ['source_loaded_at']},
        ],
    )
}}

-- Every other name a file has had, both ways: the rename pairs of the working clone's
-- history chained, so a file moved a -> b -> c links a, b and c to each other. One row per
-- (path, alias_path), never (path, path). Incremental: a build re-chains only repositories with
-- a pair recorded since the high-water mark, and writes only rows not already here.
with recursive

renames as (
    select * from {{ ref('stg_ops__path_renames') }}
),

{% if is_incremental() -%}
    scope as (
        select distinct repo_id
        from renames
        where {{ incremental_window('recorded_at') }}
    ),
{%- endif %}

scoped as (
    select * from renames
    {%- if is_incremental() %}
        where repo_id in (select scope.repo_id from scope)
    {%- endif %}
),

-- a rename links its two names in both directions
edges as (
    select
        repo_id,
        old_path as path,
        new_path as alias_path
    from scoped
    union
    select
        repo_id,
        new_path as path,
        old_path as alias_path
    from scoped
),

-- UNION (not UNION ALL) keeps the walk finite when a file moves back to an earlier name
chained (repo_id, path, alias_path) as (
    select
        repo_id,
        path,
        alias_path
    from edges
    union
    select
        chained.repo_id,
        chained.path,
        edges.alias_path
    from chained
    inner join edges
        on
            chained.repo_id = edges.repo_id
            and chained.alias_path = edges.path
),

loaded as (
    select
        repo_id,
        max(recorded_at) as source_loaded_at
    from scoped
    group by repo_id
),

aliases as (
    select
        chained.repo_id,
        chained.path,
        chained.alias_path,
        edges.path is not null as is_direct,
        loaded.source_loaded_at
    from chained
    inner join loaded on chained.repo_id = loaded.repo_id
    left join edges
        on
            chained.repo_id = edges.repo_id
            and chained.path = edges.path
            and chained.alias_path = edges.alias_path
    where chained.path != chained.alias_path
),

{% if is_incremental() -%}
    changed as (
        select * from aliases
        where not {{ unchanged_in_this(
            'aliases', ['repo_id', 'path', 'alias_path'], ['is_direct']
        ) }}
    ),
{%- else -%}
    changed as (
        select * from aliases
    ),
{%- endif %}

final as (
    select * from changed
)

select * from final
