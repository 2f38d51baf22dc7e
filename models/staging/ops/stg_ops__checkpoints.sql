with

source as (
    select * from {{ source('ops', 'checkpoints') }}
),

final as (
    select
        repo_id,
        pass_name,
        high_water,
        cursor as resume_cursor,
        updated_at
    from source
)

select * from final
