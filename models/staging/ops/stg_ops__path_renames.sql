-- Rename pairs from the working clone's history (`relored clone`): paths and shas only.
with

source as (
    select * from {{ source('ops', 'path_renames') }}
),

final as (
    select
        repo_id,
        commit_sha,
        old_path,
        new_path,
        similarity,
        committed_at,
        recorded_at
    from source
)

select * from final
