{{ config(**signal_mart_config(
    ['path', 'source'],
    ['path'],
    watermark_inputs=[('stg_github__pull_files', 'loaded_at')],
)) }}

-- Files a thread touches or talks about, by provenance. GitHub's changed-file list and a
-- review comment's own anchor are definitive and stored as GitHub wrote them (never through
-- the prose heuristic: Dockerfile, .gitignore, Makefile stay); prose paths are what
-- relore_prose_paths finds in the redacted text, in relore_path_normal_form.
with

{{ signal_scope([('stg_github__pull_files', 'thread_number', 'loaded_at')]) }}

pull_files as (
    select * from {{ ref('stg_github__pull_files') }} as pull_files
    where not is_deleted and {{ in_thread_scope('scope', 'pull_files') }}
),

found as (
    select
        repo_id,
        thread_number,
        {{ relore_fn('redact') }}(filename) as path,
        'changed_file' as source,
        change_status as change_type
    from pull_files
    union all
    select
        repo_id,
        thread_number,
        {{ relore_fn('redact') }}(previous_filename) as path,
        'changed_file' as source,
        'renamed_from' as change_type
    from pull_files
    where previous_filename is not null
    union all
    select
        repo_id,
        thread_number,
        path,
        'inline_anchor' as source,
        null as change_type
    from scoped_documents
    where document_kind = 'review_comment' and path is not null
    union all
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        prose_path.path,
        'prose' as source,
        null as change_type
    from scoped_documents
    cross join lateral {{ relore_fn('prose_paths') }}(
        scoped_documents.body_text
    ) as prose_path (path)
),

signals as (
    select
        found.repo_id,
        found.thread_number,
        found.path,
        found.source,
        min(found.change_type) as change_type,
        max(thread_loaded.loaded_at) as source_loaded_at
    from found
    inner join thread_loaded
        on
            found.repo_id = thread_loaded.repo_id
            and found.thread_number = thread_loaded.thread_number
    group by found.repo_id, found.thread_number, found.path, found.source
),

{{ replace_thread_sets('signals', 'scope', ['path', 'source', 'change_type']) }}

select * from final
