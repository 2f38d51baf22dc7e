-- Comments, review comments and reviews whose thread head (the issue row) never landed: kept
-- out of the marts, counted here (repo_status.orphan_comments, a warn-severity test).
with

issues as (
    select * from {{ ref('stg_github__issues') }}
),

children as (
    select
        repo_id,
        'issue_comment' as object_type,
        comment_id as object_id,
        thread_number,
        loaded_at
    from {{ ref('stg_github__issue_comments') }}
    where not is_deleted
    union all
    select
        repo_id,
        'review_comment' as object_type,
        review_comment_id as object_id,
        thread_number,
        loaded_at
    from {{ ref('stg_github__review_comments') }}
    where not is_deleted
    union all
    select
        repo_id,
        'review' as object_type,
        review_id as object_id,
        thread_number,
        loaded_at
    from {{ ref('stg_github__reviews') }}
    where not is_deleted
),

final as (
    select children.*
    from children
    where not exists (
        select 1
        from issues
        where
            issues.repo_id = children.repo_id
            and issues.number = children.thread_number
    )
)

select * from final
