{{ config(**signal_mart_config(
    ['sha', 'source'],
    ['sha'],
    watermark_inputs=[('threads', 'source_loaded_at')],
)) }}

-- Commits a thread names: its pull request's merge and head commits, review anchors'
-- commit_id, and commit-looking hex in prose (relore_commit_mentions: 7-12 hex with a digit
-- and a letter, not an address, uuid part or number; a commit URL's sha; a 40-hex word only on
-- a line that says commit, sha, merged ..., or that the thread's pull request or reviews
-- name: a bare 40-hex word is as likely a pasted key).
with

{{ signal_scope([('threads', 'number', 'source_loaded_at')]) }}

threads as (
    select * from {{ ref('threads') }} as threads
    where {{ in_thread_scope('scope', 'threads', 'number') }}
),

-- what the thread's pull request and reviews say it carried
known as (
    select
        repo_id,
        number as thread_number,
        lower(merge_commit_sha) as sha,
        'merge_commit' as source
    from threads
    where merge_commit_sha is not null and not is_deleted
    union all
    select
        repo_id,
        number as thread_number,
        lower(head_sha) as sha,
        'head' as source
    from threads
    where head_sha is not null and not is_deleted
    union all
    select
        repo_id,
        thread_number,
        lower(commit_id) as sha,
        'review_anchor' as source
    from scoped_documents
    where commit_id is not null and document_kind in ('review_comment', 'review')
),

-- prose: a word the body says is a commit, or a bare 40-hex word the thread's pull request
-- or reviews name too (`known` may match a sha twice: signals groups)
found as (
    select * from known
    union all
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        mention.sha,
        'prose' as source
    from scoped_documents
    cross join
        lateral {{ relore_fn('commit_mentions') }}(
            scoped_documents.body_markdown
        ) as mention (sha, said)
    left join known
        on
            scoped_documents.repo_id = known.repo_id
            and scoped_documents.thread_number = known.thread_number
            and mention.sha = known.sha
    where mention.said or known.sha is not null
),

signals as (
    select
        found.repo_id,
        found.thread_number,
        found.sha,
        found.source,
        max(thread_loaded.loaded_at) as source_loaded_at
    from found
    inner join thread_loaded
        on
            found.repo_id = thread_loaded.repo_id
            and found.thread_number = thread_loaded.thread_number
    group by found.repo_id, found.thread_number, found.sha, found.source
),

{{ replace_thread_sets('signals', 'scope', ['sha', 'source']) }}

select * from final
