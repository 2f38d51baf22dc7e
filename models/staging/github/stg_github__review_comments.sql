-- Review comments anchored on a pull request's diff (`GET /pulls/comments` items). diff_hunk
-- is GitHub's context around the anchor; it is redacted downstream like any other text.
{{ config(**staging_table_config('review_comment_id')) }}

with

latest_versions as (
    {{ latest_versions(['review_comment'], 'review_comment_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as review_comment_id,
        coalesce(
            thread_number,
            substring(payload ->> 'pull_request_url' from '/pulls/([0-9]+)$')::integer
        ) as thread_number,
        (payload ->> 'pull_request_review_id')::bigint as review_id,
        (payload ->> 'in_reply_to_id')::bigint as in_reply_to_id,
        payload ->> 'body' as body,
        payload ->> 'path' as path,
        (payload ->> 'line')::integer as line,
        (payload ->> 'original_line')::integer as original_line,
        (payload ->> 'start_line')::integer as start_line,
        payload ->> 'side' as side,
        payload ->> 'commit_id' as commit_id,
        payload ->> 'original_commit_id' as original_commit_id,
        payload ->> 'diff_hunk' as diff_hunk,
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
