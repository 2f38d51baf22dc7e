-- Names GitHub resolved for relore (extract/repo_names.py): a former name of a repository
-- carries its repo_id; a name of no repository carries none.
with

source as (
    select * from {{ source('ops', 'repo_names') }}
),

final as (
    select
        name as asked_repo,
        repo_id,
        full_name as repo,
        checked_at
    from source
)

select * from final
