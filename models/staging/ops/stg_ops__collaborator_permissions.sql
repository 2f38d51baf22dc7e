-- What GitHub says each checked author may do in the repository (the authority pass).
with

source as (
    select * from {{ source('ops', 'collaborator_permissions') }}
),

final as (
    select
        repo_id,
        login,
        permission,
        role_name,
        permission in ('admin', 'maintain', 'write') as has_write,
        checked_at
    from source
)

select * from final
