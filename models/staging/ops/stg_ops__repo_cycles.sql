with

source as (
    select * from {{ source('ops', 'repo_cycles') }}
),

final as (
    select
        repo_id,
        cycle_id,
        full_name as repo,
        role,
        outcome,
        started_at,
        finished_at,
        requests,
        not_modified,
        rows_written,
        reason,
        budget_limit,
        budget_remaining,
        budget_reset
    from source
)

select * from final
