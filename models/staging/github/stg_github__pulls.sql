-- Pull requests as `GET /pulls/{n}` returns them (object_id is the pull request's own id,
-- not its issue id): merge state, merge commit, head and base, size.
{{ config(**staging_table_config('pull_id', 'number')) }}

with

latest_versions as (
    {{ latest_versions(['pull'], 'pull_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as pull_id,
        coalesce((payload ->> 'number')::integer, thread_number) as number,
        payload ->> 'state' as state,
        coalesce((payload ->> 'draft')::boolean, false) as is_draft,
        (payload ->> 'merged')::boolean as is_merged,
        (payload ->> 'merged_at')::timestamptz as merged_at,
        payload ->> 'merge_commit_sha' as merge_commit_sha,
        payload -> 'head' ->> 'sha' as head_sha,
        payload -> 'head' ->> 'ref' as head_ref,
        payload -> 'base' ->> 'sha' as base_sha,
        payload -> 'base' ->> 'ref' as base_ref,
        (payload ->> 'changed_files')::integer as changed_files,
        (payload ->> 'additions')::integer as additions,
        (payload ->> 'deletions')::integer as deletions,
        (payload ->> 'commits')::integer as commit_count,
        (payload ->> 'review_comments')::integer as review_comment_count,
        payload -> 'merged_by' ->> 'login' as merged_by_login,
        payload ->> 'html_url' as html_url,
        (payload ->> 'created_at')::timestamptz as created_at,
        (payload ->> 'updated_at')::timestamptz as updated_at,
        is_deleted,
        row_id as version_row_id,
        loaded_at
    from latest_versions
)

select * from final
