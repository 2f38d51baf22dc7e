-- How much of each pull request's changed-file list the extractor read.
with

source as (
    select * from {{ source('ops', 'pull_file_walks') }}
),

final as (
    select
        repo_id,
        number,
        files_listed,
        changed_files,
        truncated as is_truncated,
        walked_at
    from source
)

select * from final
