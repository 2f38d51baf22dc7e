with

source as (
    select * from {{ source('ops', 'repos') }}
),

final as (
    select
        repo_id,
        full_name as repo,
        owner_login,
        owner_type,
        first_seen_at,
        last_seen_at
    from source
)

select * from final
