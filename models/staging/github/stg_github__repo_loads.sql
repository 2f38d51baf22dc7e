-- Per repository, when raw last received anything: the extract side of status.
with

source as (
    select * from {{ source('github', 'github_objects') }}
),

final as (
    select
        repo_id,
        max(loaded_at) as last_loaded_at,
        max(row_id) as last_row_id
    from source
    group by repo_id
)

select * from final
