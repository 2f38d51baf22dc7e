{{ config(materialized='view') }}

-- Each extract pass's high-water mark per repository, readable by the SELECT-only role.
with

checkpoints as (
    select * from {{ ref('stg_ops__checkpoints') }}
),

ops_repos as (
    select * from {{ ref('stg_ops__repos') }}
),

final as (
    select
        checkpoints.repo_id,
        ops_repos.repo,
        checkpoints.pass_name,
        checkpoints.high_water,
        checkpoints.updated_at
    from checkpoints
    left join ops_repos on checkpoints.repo_id = ops_repos.repo_id
)

select * from final
