{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id', 'number'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'number'], 'unique': True},
            {'columns': ['repo_id', 'thread_id']},
            {'columns': ['repo_id', 'updated_at']},
            {'columns': ['source_loaded_at']},
            {'columns': ['repo_id', 'written_at']},
        ],
    )
}}

-- depends_on: {{ ref('stg_ops__collaborator_permissions') }}
-- depends_on: {{ ref('machine_accounts') }}

{%- set compared_columns = [
    'repo', 'thread_id', 'kind', 'state', 'github_state', 'is_merged', 'merged_at', 'title',
    'author_login',
    'author_association', 'labels', 'created_at', 'updated_at', 'closed_at', 'comment_count',
    'url', 'is_deleted', 'pull_id', 'is_draft', 'merge_commit_sha', 'head_sha', 'head_ref',
    'base_ref', 'changed_files', 'additions', 'deletions', 'files_listed', 'files_truncated',
    'issue_comments', 'review_comments', 'reviews', 'opening_post_trust',
] %}

with

{% if is_incremental() -%}
    scope as (
        select
            repo_id,
            thread_number,
            max(changed_at) as changed_at
        from (
            {{ thread_scope_changes([
                ('stg_github__issues', 'number', 'loaded_at'),
                ('stg_github__pulls', 'number', 'loaded_at'),
                ('stg_github__issue_comments', 'thread_number', 'loaded_at'),
                ('stg_github__review_comments', 'thread_number', 'loaded_at'),
                ('stg_github__reviews', 'thread_number', 'loaded_at'),
                ('stg_ops__pull_file_walks', 'number', 'walked_at'),
            ], mart_since()) }}
            union all
            -- The opening post's tier moved while none of the thread's inputs did: documents
            -- re-tiered it because authority checked its author's write access since, or
            -- its author is (or was) a machine account. Only those threads are compared,
            -- one index lookup each.
            select
                in_mart.repo_id,
                in_mart.number as thread_number,
                in_mart.source_loaded_at as changed_at
            from {{ this }} as in_mart
            inner join lateral (
                {{ opening_post_trust('in_mart') }}
            ) as opening_post on true
            where
                opening_post.trust_tier is distinct from in_mart.opening_post_trust
                and (
                    exists (
                        select 1
                        from {{ ref('stg_ops__collaborator_permissions') }} as permissions
                        where
                            permissions.repo_id = in_mart.repo_id
                            and permissions.login = in_mart.author_login
                            and permissions.checked_at > {{ mart_since() }}
                    )
                    or exists (
                        select 1
                        from {{ ref('machine_accounts') }} as machine_accounts
                        where machine_accounts.login = in_mart.author_login
                    )
                    or (
                        in_mart.opening_post_trust = 'machine'
                        and in_mart.author_login not like '%[bot]'
                    )
                )
        ) as changes
        group by repo_id, thread_number
    ),
{%- endif %}

issues as (
    select staged.* from {{ ref('stg_github__issues') }} as staged
    {%- if is_incremental() %}
        where {{ in_thread_scope('scope', 'staged', 'number') }}
    {%- endif %}
),

pulls as (
    -- one pull request per number: the newest landed
    select distinct on (staged.repo_id, staged.number) staged.*
    from {{ ref('stg_github__pulls') }} as staged
    {%- if is_incremental() %}
        where {{ in_thread_scope('scope', 'staged', 'number') }}
    {%- endif %}
    order by staged.repo_id asc, staged.number asc, staged.loaded_at desc
),

walks as (
    select * from {{ ref('stg_ops__pull_file_walks') }}
),

{%- for name, model_name in [
    ('issue_comment_counts', 'stg_github__issue_comments'),
    ('review_comment_counts', 'stg_github__review_comments'),
    ('review_counts', 'stg_github__reviews'),
] %}

    {{ name }} as (
        select
            repo_id,
            thread_number,
            count(*) filter (where not is_deleted) as live,
            max(loaded_at) as loaded_at
        from {{ ref(model_name) }} as children
        {%- if is_incremental() %}
            where {{ in_thread_scope('scope', 'children') }}
        {%- endif %}
        group by repo_id, thread_number
    ),
{%- endfor %}

threads as (
    select
        issues.repo_id,
        issues.repo,
        issues.issue_id as thread_id,
        issues.number,
        issues.kind,
        -- the one state every surface says: merged, else GitHub's open / closed
        case
            when coalesce(pulls.is_merged, issues.merged_at is not null) then 'merged'
            else issues.state
        end as state,
        -- GitHub's own two states (a merged pull request is closed there)
        issues.state as github_state,
        coalesce(pulls.is_merged, issues.merged_at is not null) as is_merged,
        coalesce(pulls.merged_at, issues.merged_at) as merged_at,
        -- a deleted thread keeps its row and flag, never its title
        case
            when not issues.is_deleted then {{ relore_fn('redact') }}(issues.title)
        end as title,
        issues.author_login,
        issues.author_association,
        -- the opening post's trust tier as documents derived it (null: no opening post)
        opening_post.trust_tier as opening_post_trust,
        -- every retrieved string is redacted, labels and branch names too
        (
            select
                coalesce(
                    jsonb_agg(
                        {{ relore_fn('redact') }}(issue_label.label_name)
                        order by issue_label.label_at
                    ),
                    '[]'::jsonb
                )
            from
                jsonb_array_elements_text(issues.labels)
                with ordinality as issue_label (label_name, label_at)
        ) as labels,
        issues.created_at,
        issues.updated_at,
        issues.closed_at,
        issues.comment_count,
        issues.html_url as url,
        issues.is_deleted,
        pulls.pull_id,
        pulls.is_draft,
        pulls.merge_commit_sha,
        pulls.head_sha,
        {{ relore_fn('redact') }}(pulls.head_ref) as head_ref,
        {{ relore_fn('redact') }}(pulls.base_ref) as base_ref,
        pulls.changed_files,
        pulls.additions,
        pulls.deletions,
        walks.files_listed,
        walks.is_truncated as files_truncated,
        coalesce(issue_comment_counts.live, 0) as issue_comments,
        coalesce(review_comment_counts.live, 0) as review_comments,
        coalesce(review_counts.live, 0) as reviews,
        greatest(
            issues.loaded_at,
            pulls.loaded_at,
            walks.walked_at,
            issue_comment_counts.loaded_at,
            review_comment_counts.loaded_at,
            review_counts.loaded_at
        ) as source_loaded_at
    from issues
    left join pulls
        on
            issues.repo_id = pulls.repo_id
            and issues.number = pulls.number
            and issues.kind = 'pr'
    left join walks
        on
            issues.repo_id = walks.repo_id
            and issues.number = walks.number
    left join lateral (
        {{ opening_post_trust('issues') }}
    ) as opening_post on true
    left join issue_comment_counts
        on
            issues.repo_id = issue_comment_counts.repo_id
            and issues.number = issue_comment_counts.thread_number
    left join review_comment_counts
        on
            issues.repo_id = review_comment_counts.repo_id
            and issues.number = review_comment_counts.thread_number
    left join review_counts
        on
            issues.repo_id = review_counts.repo_id
            and issues.number = review_counts.thread_number
),

{% if is_incremental() -%}
    changed as (
        select * from threads
        where not {{ unchanged_in_this('threads', ['repo_id', 'number'], compared_columns) }}
    ),
{%- else -%}
    changed as (
        select * from threads
    ),
{%- endif %}

-- written_at: when this row was last written (a build's transaction time). The search index
-- refreshes the threads written since its mark, whatever changed in them.
final as (
    select
        changed.*,
        current_timestamp as written_at
    from changed
)

select * from final
