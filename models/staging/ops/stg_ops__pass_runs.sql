with

source as (
    select * from {{ source('ops', 'pass_runs') }}
),

final as (
    select
        repo_id,
        run_id,
        pass_name,
        status,
        started_at,
        finished_at,
        requests,
        rows_seen,
        rows_written
    from source
)

select * from final
