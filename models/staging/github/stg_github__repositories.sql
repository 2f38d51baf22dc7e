{{ config(**staging_table_config('repository_id', none)) }}

with

latest_versions as (
    {{ latest_versions(['repository'], 'repository_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as repository_id,
        payload ->> 'full_name' as full_name,
        payload -> 'owner' ->> 'login' as owner_login,
        payload -> 'owner' ->> 'type' as owner_type,
        payload ->> 'description' as description,
        payload ->> 'default_branch' as default_branch,
        payload ->> 'html_url' as html_url,
        coalesce((payload ->> 'private')::boolean, false) as is_private,
        coalesce((payload ->> 'fork')::boolean, false) as is_fork,
        coalesce((payload ->> 'archived')::boolean, false) as is_archived,
        (payload ->> 'created_at')::timestamptz as created_at,
        (payload ->> 'updated_at')::timestamptz as updated_at,
        (payload ->> 'pushed_at')::timestamptz as pushed_at,
        is_deleted,
        row_id as version_row_id,
        loaded_at
    from latest_versions
)

select * from final
