-- Pull request reviews, from REST (`review`) and GraphQL (`review_graphql`) in one id space
-- (GraphQL databaseId = REST id): the newest landed version of either shape wins.
{{ config(**staging_table_config('review_id')) }}

with

latest_versions as (
    {{ latest_versions(['review', 'review_graphql'], 'review_id') }}
),

final as (
    select
        repo_id,
        repo,
        object_id as review_id,
        coalesce(
            thread_number,
            substring(
                coalesce(payload ->> 'html_url', payload ->> 'url') from '/pull/([0-9]+)'
            )::integer
        ) as thread_number,
        payload_type as source_shape,
        payload ->> 'body' as body,
        payload ->> 'state' as state,
        case
            when payload_type = 'review_graphql' then payload -> 'author' ->> 'login'
            else payload -> 'user' ->> 'login'
        end as author_login,
        case
            when payload_type = 'review_graphql' then payload -> 'author' ->> '__typename'
            else payload -> 'user' ->> 'type'
        end as author_type,
        coalesce(
            payload ->> 'author_association', payload ->> 'authorAssociation'
        ) as author_association,
        coalesce(payload ->> 'commit_id', payload -> 'commit' ->> 'oid') as commit_id,
        coalesce(payload ->> 'html_url', payload ->> 'url') as html_url,
        coalesce(payload ->> 'submitted_at', payload ->> 'submittedAt')::timestamptz
            as submitted_at,
        coalesce(
            payload ->> 'updatedAt', payload ->> 'submitted_at', payload ->> 'submittedAt'
        )::timestamptz as updated_at,
        is_deleted,
        row_id as version_row_id,
        loaded_at
    from latest_versions
)

select * from final
