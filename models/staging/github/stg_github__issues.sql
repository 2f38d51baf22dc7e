-- Issues and pull requests as the issue list returns them: a pull request is an issue whose
-- payload has a `pull_request` key (holding merged_at on current API versions).
{{ config(**staging_table_config('issue_id', 'number')) }}

with

latest_versions as (
    {{ latest_versions(['issue'], 'issue_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as issue_id,
        coalesce((payload ->> 'number')::integer, thread_number) as number,
        case when payload ? 'pull_request' then 'pr' else 'issue' end as kind,
        payload ->> 'state' as state,
        payload ->> 'state_reason' as state_reason,
        payload ->> 'title' as title,
        payload ->> 'body' as body,
        (payload -> 'user' ->> 'id')::bigint as author_id,
        payload -> 'user' ->> 'login' as author_login,
        payload -> 'user' ->> 'type' as author_type,
        payload ->> 'author_association' as author_association,
        (
            select
                coalesce(
                    jsonb_agg(label_name.value order by label_name.value), '[]'::jsonb
                ) as label_names
            from jsonb_path_query(latest_versions.payload, '$.labels[*].name') as label_name (value)
        ) as labels,
        coalesce((payload ->> 'comments')::integer, 0) as comment_count,
        coalesce((payload ->> 'locked')::boolean, false) as is_locked,
        (payload -> 'pull_request' ->> 'merged_at')::timestamptz as merged_at,
        payload ->> 'html_url' as html_url,
        (payload ->> 'created_at')::timestamptz as created_at,
        (payload ->> 'updated_at')::timestamptz as updated_at,
        (payload ->> 'closed_at')::timestamptz as closed_at,
        is_deleted,
        row_id as version_row_id,
        loaded_at
    from latest_versions
)

select * from final
