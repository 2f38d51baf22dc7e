{#-
    The columns of a document row, in mart order (keys first; is_deleted and
    source_loaded_at last). content_hash covers every one of them except trust_tier (compared
    on its own: authority resolving changes a tier, not a byte) and source_loaded_at.
-#}
{% macro document_columns() -%}
    {{ return([
        'repo_id', 'repo', 'document_id', 'document_kind', 'source_id', 'source_document_id',
        'chunk_index', 'chunk_count', 'thread_number', 'thread_kind', 'author_login',
        'author_type', 'author_association', 'trust_tier', 'title', 'body_markdown', 'body_text',
        'url', 'created_at', 'updated_at', 'path', 'line', 'original_line', 'start_line', 'side',
        'commit_id', 'original_commit_id', 'diff_hunk', 'in_reply_to_id', 'review_id',
        'review_state', 'content_hash', 'is_deleted', 'source_loaded_at',
    ]) }}
{%- endmacro %}

{#-
    CTEs deriving every document of the threads in `scope` (a CTE of repo_id, thread_number),
    or of every thread when scope is none; the last CTE is `derived_documents`.

    Kinds: opening_post (issue / pull request body), issue_comment, review_comment (with its
    diff anchor), review (a review with a body). Only threads whose head (the issue row) has
    landed: a comment without its thread is an orphan, counted in repo_status and by a
    warn-severity test, never a document. Empty bodies are nothing to retrieve.

    Text: CR and HTML comments dropped, secrets redacted (relore_redact, also the title, the
    diff hunk and the path), then long bodies cut on paragraph boundaries (relore_chunks) and
    each chunk normalised to text and redacted once more (markdown_to_text can join a secret
    that tags or backticks split). Nothing here or downstream reads the raw text.
    document_id is '<kind>:<source_id>' for chunk 0 and '<kind>:<source_id>:<chunk_index>'
    after it; source_document_id is always the former.
-#}
{% macro document_rows(scope=none) -%}
{%- set inputs = [
    ('doc_heads', 'stg_github__issues', 'issues', 'number'),
    ('doc_issue_comments', 'stg_github__issue_comments', 'comments', 'thread_number'),
    ('doc_review_comments', 'stg_github__review_comments', 'comments', 'thread_number'),
    ('doc_reviews', 'stg_github__reviews', 'reviews', 'thread_number'),
] %}
{%- for cte, model, alias, number in inputs %}
{{ cte }} as (
        select * from {{ ref(model) }} as {{ alias }}
{%- if scope %}
            where {{ in_thread_scope(scope, alias, number) }}
{%- endif %}
    ),
{% endfor %}
    doc_permissions as (
        select * from {{ ref('stg_ops__collaborator_permissions') }}
    ),

    doc_machine_accounts as (
        select * from {{ ref('machine_accounts') }}
    ),

    doc_sources as (
        select
            repo_id,
            'opening_post' as document_kind,
            issue_id as source_id,
            number as thread_number,
            author_login,
            author_type,
            author_association,
            body,
            html_url as url,
            created_at,
            updated_at,
            null::text as path,
            null::integer as line,
            null::integer as original_line,
            null::integer as start_line,
            null::text as side,
            null::text as commit_id,
            null::text as original_commit_id,
            null::text as diff_hunk,
            null::bigint as in_reply_to_id,
            null::bigint as review_id,
            null::text as review_state,
            is_deleted,
            loaded_at
        from doc_heads
        union all
        select
            repo_id,
            'issue_comment',
            comment_id,
            thread_number,
            author_login,
            author_type,
            author_association,
            body,
            html_url,
            created_at,
            updated_at,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            null,
            is_deleted,
            loaded_at
        from doc_issue_comments
        union all
        select
            repo_id,
            'review_comment',
            review_comment_id,
            thread_number,
            author_login,
            author_type,
            author_association,
            body,
            html_url,
            created_at,
            updated_at,
            path,
            line,
            original_line,
            start_line,
            side,
            commit_id,
            original_commit_id,
            diff_hunk,
            in_reply_to_id,
            review_id,
            null,
            is_deleted,
            loaded_at
        from doc_review_comments
        union all
        select
            repo_id,
            'review',
            review_id,
            thread_number,
            author_login,
            author_type,
            author_association,
            body,
            html_url,
            submitted_at,
            updated_at,
            null,
            null,
            null,
            null,
            null,
            commit_id,
            null,
            null,
            null,
            review_id,
            state,
            is_deleted,
            loaded_at
        from doc_reviews
    ),

    doc_cleaned as (
        select
            doc_sources.*,
            doc_heads.repo,
            doc_heads.kind as thread_kind,
            {{ relore_fn('redact') }}(doc_heads.title) as title,
            doc_sources.is_deleted or doc_heads.is_deleted as is_gone,
            greatest(doc_sources.loaded_at, doc_heads.loaded_at) as source_loaded_at,
            {{ trust_tier(
                'doc_sources.author_type',
                'doc_sources.author_login',
                'doc_sources.author_association',
                'doc_machine_account.is_machine_account',
                'doc_permissions.has_write'
            ) }} as trust_tier,
            {{ relore_fn('redact') }}(
                regexp_replace(replace(doc_sources.body, chr(13), ''), '<!--.*?-->', '', 'g')
            ) as clean_markdown
        from doc_sources
        inner join doc_heads
            on
                doc_sources.repo_id = doc_heads.repo_id
                and doc_sources.thread_number = doc_heads.number
        left join doc_permissions
            on
                doc_sources.repo_id = doc_permissions.repo_id
                and doc_sources.author_login = doc_permissions.login
        left join lateral (
            select bool_or(true) as is_machine_account
            from doc_machine_accounts
            where
                doc_machine_accounts.login = doc_sources.author_login
                and (
                    coalesce(doc_machine_accounts.repo, '') = ''
                    or lower(doc_machine_accounts.repo) = lower(doc_heads.repo)
                )
        ) as doc_machine_account on true
    ),

    doc_chunks as (
        select
            doc_cleaned.*,
            doc_chunk.chunk_index,
            doc_chunk.chunk,
            count(*) over (
                partition by doc_cleaned.repo_id, doc_cleaned.document_kind, doc_cleaned.source_id
            ) as chunk_count
        from doc_cleaned
        cross join lateral {{ relore_fn('chunks') }}(
            doc_cleaned.clean_markdown, {{ var('relore_chunk_chars', 1500) }}
        ) as doc_chunk
        where btrim(coalesce(doc_cleaned.clean_markdown, '')) <> ''
    ),

    doc_rows as (
        select
            repo_id,
            repo,
            document_kind
            || ':'
            || source_id
            || case when chunk_index > 0 then ':' || chunk_index else '' end as document_id,
            document_kind,
            source_id,
            document_kind || ':' || source_id as source_document_id,
            chunk_index,
            chunk_count::integer as chunk_count,
            thread_number,
            thread_kind,
            author_login,
            author_type,
            author_association,
            trust_tier,
            title,
            chunk as body_markdown,
            -- redacted again: markdown_to_text joins what tags, backticks and links split
            coalesce(
                {{ relore_fn('redact') }}({{ relore_fn('markdown_to_text') }}(chunk)), ''
            ) as body_text,
            url,
            created_at,
            updated_at,
            {{ relore_fn('redact') }}(path) as path,
            line,
            original_line,
            start_line,
            side,
            commit_id,
            original_commit_id,
            {{ relore_fn('redact') }}(diff_hunk) as diff_hunk,
            in_reply_to_id,
            review_id,
            review_state,
            is_gone as is_deleted,
            source_loaded_at
        from doc_chunks
    ),

    derived_documents as (
        select
{%- for column in document_columns() %}
{%- if column == 'content_hash' %}
                    md5(
                        jsonb_build_array(
                            {%- for hashed in document_columns()
                                if hashed not in ('trust_tier', 'content_hash', 'source_loaded_at') %}
                                {{ hashed }}{{ ',' if not loop.last }}
                            {%- endfor %}
                        )::text
                    ) as content_hash,
                {%- else %}
{{ column }}{{ ',' if not loop.last }}
{%- endif %}
{%- endfor %}
        from doc_rows
    )
{%- endmacro %}
