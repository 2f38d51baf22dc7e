-- Comments on issues and pull requests (the conversation, not review comments on a diff).
{{ config(**staging_table_config('comment_id')) }}

with

latest_versions as (
    {{ latest_versions(['issue_comment'], 'comment_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as comment_id,
        coalesce(
            thread_number,
            substring(payload ->> 'issue_url' from '/issues/([0-9]+)$')::integer
        ) as thread_number,
        payload ->> 'body' as body,
        (payload -> 'user' ->> 'id')::bigint as author_id,
        payload -> 'user' ->> 'login' as author_login,
        payload -> 'user' ->> 'type' as author_type,
        payload ->> 'author_association' as author_association,
        payload ->> 'html_url' as html_url,
        (payload ->> 'created_at')::timestamptz as created_at,
        (payload ->> 'updated_at')::timestamptz as updated_at,
        is_deleted,
        row_id as version_row_id,
        loaded_at
    from latest_versions
)

select * from final
