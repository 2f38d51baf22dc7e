-- Every retrievable text unit, one row per (repo_id, document_id): each thread's opening post
-- (the issue / pull request body) and each issue comment, with markdown normalised to text,
-- the author's trust tier and a hash of everything the documents mart stores about it.
-- Later document kinds (review comments, reviews) and chunks (chunk_index > 0) add rows here.
with

issues as (
    select * from {{ ref('stg_github__issues') }}
),

issue_comments as (
    select * from {{ ref('stg_github__issue_comments') }}
),

opening_posts as (
    select
        repo_id,
        repo,
        'opening_post' as document_kind,
        issue_id as source_id,
        number as thread_number,
        kind as thread_kind,
        title,
        author_login,
        author_type,
        author_association,
        body,
        html_url as url,
        created_at,
        updated_at,
        -- An empty body is nothing to retrieve: flagged like a deletion, so a body edited
        -- to empty leaves the index too.
        is_deleted or coalesce(btrim(body), '') = '' as is_deleted,
        loaded_at as source_loaded_at
    from issues
),

comments as (
    select
        issue_comments.repo_id,
        issue_comments.repo,
        'issue_comment' as document_kind,
        issue_comments.comment_id as source_id,
        issue_comments.thread_number,
        -- The thread may not be landed yet: a pull request's comment links to /pull/N.
        coalesce(
            issues.kind,
            case when issue_comments.html_url ~ '/pull/[0-9]+#' then 'pr' else 'issue' end
        ) as thread_kind,
        issues.title,
        issue_comments.author_login,
        issue_comments.author_type,
        issue_comments.author_association,
        issue_comments.body,
        issue_comments.html_url as url,
        issue_comments.created_at,
        issue_comments.updated_at,
        issue_comments.is_deleted,
        -- A comment's row carries its thread's title and kind, so a new thread version is
        -- a new input to it too.
        greatest(issue_comments.loaded_at, issues.loaded_at) as source_loaded_at
    from issue_comments
    left join issues
        on
            issue_comments.repo_id = issues.repo_id
            and issue_comments.thread_number = issues.number
),

unioned as (
    select * from opening_posts
    union all
    select * from comments
),

normalized as (
    select
        repo_id,
        repo,
        document_kind || ':' || source_id as document_id,
        document_kind,
        source_id,
        0 as chunk_index,
        thread_number,
        thread_kind,
        author_login,
        author_type,
        author_association,
        {{ trust_tier('author_type', 'author_login', 'author_association') }} as trust_tier,
        title,
        coalesce(body, '') as body_markdown,
        coalesce({{ markdown_to_text('body') }}, '') as body_text,
        url,
        created_at,
        updated_at,
        is_deleted,
        source_loaded_at
    from unioned
),

final as (
    select
        *,
        -- Everything the mart stores except source_loaded_at and what derives from these
        -- (search_vector): equal hash, nothing to rewrite.
        md5(
            jsonb_build_array(
                document_id,
                document_kind,
                source_id,
                chunk_index,
                repo,
                thread_number,
                thread_kind,
                author_login,
                author_type,
                author_association,
                trust_tier,
                title,
                body_markdown,
                body_text,
                url,
                created_at,
                updated_at,
                is_deleted
            )::text
        ) as content_hash
    from normalized
)

select * from final
