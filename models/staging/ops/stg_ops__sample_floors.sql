-- Where a sampled index begins, per sample pass.
with

source as (
    select * from {{ source('ops', 'sample_floors') }}
),

final as (
    select
        repo_id,
        pass_name,
        floor as sample_floor,
        kind,
        merged_only,
        recorded_at
    from source
)

select * from final
