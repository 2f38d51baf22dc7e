{{ config(materialized='view') }}

-- The GitHub token's budget as `relored cycle` last recorded it (each repository's turn
-- records the core bucket when it starts and ends: ops.repo_cycles): one row, none before
-- the first cycle. A view over ops, read at query time.
with

cycles as (
    select * from {{ ref('stg_ops__repo_cycles') }}
),

final as (
    select
        cycle_id,
        repo_id,
        budget_limit,
        budget_remaining,
        budget_reset,
        coalesce(finished_at, started_at) as recorded_at,
        coalesce(budget_reset <= now(), false) as reset_passed
    from cycles
    where budget_remaining is not null
    order by coalesce(finished_at, started_at) desc, cycle_id desc
    limit 1
)

select * from final
