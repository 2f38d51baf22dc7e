-- Every retrievable text unit of every landed thread, derived from staging: the one place a
-- document row is computed. Kinds: opening_post (issue / pull request body), issue_comment,
-- review_comment (with its diff anchor), review (a review with a body). Only threads whose
-- head (the issue row) has landed: a comment without its thread is an orphan
-- (int_orphan_comments), never a document. Empty bodies are nothing to retrieve.
--
-- Text: CR and HTML comments dropped, secrets redacted (relore_redact, also the title, the
-- diff hunk and the path), then long bodies cut on paragraph boundaries (relore_chunks) and
-- each chunk normalised to text and redacted once more (markdown_to_text can join a secret
-- that tags or backticks split). Nothing here or downstream reads the raw text.
-- document_id is '<kind>:<source_id>' for chunk 0 and '<kind>:<source_id>:<chunk_index>'
-- after it; source_document_id is always the former.
--
-- A view: the documents mart reads it whole on a full build and, on an incremental one,
-- filtered on repo_id and thread_number to the threads it re-derives. Postgres pushes that
-- filter through every step below down to the staging scans, so keep each step pushable: a
-- window partitioned by both, no aggregate or DISTINCT outside a lateral subquery, every
-- input read once (or `not materialized`); else an incremental build derives every thread.
with

-- read twice (as the opening post and as every document's thread head): not materialized,
-- so each read is filtered by the scope and uses the (repo_id, number) index
issues as not materialized (
    select * from {{ ref('stg_github__issues') }}
),

issue_comments as (
    select * from {{ ref('stg_github__issue_comments') }}
),

review_comments as (
    select * from {{ ref('stg_github__review_comments') }}
),

reviews as (
    select * from {{ ref('stg_github__reviews') }}
),

permissions as (
    select * from {{ ref('stg_ops__collaborator_permissions') }}
),

machine_accounts as (
    select * from {{ ref('machine_accounts') }}
),

sources as (
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
    from issues
    union all
    select
        repo_id,
        'issue_comment' as document_kind,
        comment_id as source_id,
        thread_number,
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
    from issue_comments
    union all
    select
        repo_id,
        'review_comment' as document_kind,
        review_comment_id as source_id,
        thread_number,
        author_login,
        author_type,
        author_association,
        body,
        html_url as url,
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
        null::text as review_state,
        is_deleted,
        loaded_at
    from review_comments
    union all
    select
        repo_id,
        'review' as document_kind,
        review_id as source_id,
        thread_number,
        author_login,
        author_type,
        author_association,
        body,
        html_url as url,
        submitted_at as created_at,
        updated_at,
        null::text as path,
        null::integer as line,
        null::integer as original_line,
        null::integer as start_line,
        null::text as side,
        commit_id,
        null::text as original_commit_id,
        null::text as diff_hunk,
        null::bigint as in_reply_to_id,
        review_id,
        state as review_state,
        is_deleted,
        loaded_at
    from reviews
),

cleaned as (
    select
        sources.*,
        heads.repo,
        heads.kind as thread_kind,
        heads.title as unredacted_title,
        sources.is_deleted or heads.is_deleted as is_gone,
        greatest(sources.loaded_at, heads.loaded_at) as source_loaded_at,
        {{ trust_tier(
            'sources.author_type',
            'sources.author_login',
            'sources.author_association',
            'machine_account.is_machine_account',
            'permissions.has_write'
        ) }} as trust_tier,
        body.clean_markdown
    from sources
    inner join issues as heads
        on
            sources.repo_id = heads.repo_id
            and sources.thread_number = heads.number
    left join permissions
        on
            sources.repo_id = permissions.repo_id
            and sources.author_login = permissions.login
    left join lateral (
        select bool_or(true) as is_machine_account
        from machine_accounts
        where
            machine_accounts.login = sources.author_login
            and (
                coalesce(machine_accounts.repo, '') = ''
                or lower(machine_accounts.repo) = lower(heads.repo)
            )
    ) as machine_account on true
    -- redacted once here, as a function in FROM: the three uses of clean_markdown below
    -- read its one value, where an expression in the select list, inlined into each use,
    -- called relore_redact three times (the body's redaction is most of a full build)
    cross join lateral {{ relore_fn('redact') }}(
        regexp_replace(replace(sources.body, chr(13), ''), '<!--.*?-->', '', 'g')
    ) as body (clean_markdown)
),

chunked as (
    select
        cleaned.*,
        body_chunk.chunk_index,
        body_chunk.chunk
    from cleaned
    cross join lateral (
        select
            pieces.chunk_index,
            pieces.chunk
        from
            {{ relore_fn('chunks') }}(
                cleaned.clean_markdown, {{ var('relore_chunk_chars', 1500) }}
            ) as pieces
        where btrim(coalesce(cleaned.clean_markdown, '')) != ''
        union all
        -- an opening post with no body still carries its thread's title (the only
        -- document that does): one empty chunk, so a thread titled with its error stays
        -- findable. (cleaned is read once: a second read would materialize it, and the
        -- documents mart's thread filter would no longer reach the staging scans.)
        select
            0 as chunk_index,
            '' as chunk
        where
            cleaned.document_kind = 'opening_post'
            and btrim(coalesce(cleaned.clean_markdown, '')) = ''
    ) as body_chunk
),

-- The window is also a fence: Postgres never inlines a step holding one into the next, so
-- content_hash below reads each redacted value instead of calling relore_redact again. Its
-- partition holds repo_id and thread_number, so the documents mart's filter on them still
-- passes (to a window's partition columns only) down to the staging scans.
derived as (
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
        count(*) over (
            partition by repo_id, thread_number, document_kind, source_id
        )::integer as chunk_count,
        thread_number,
        thread_kind,
        author_login,
        author_type,
        author_association,
        trust_tier,
        -- the thread's title, redacted once per thread (on its opening post's first chunk,
        -- which every thread has) rather than once per document
        max(
            case
                when document_kind = 'opening_post' and chunk_index = 0
                    then {{ relore_fn('redact') }}(unredacted_title)
            end
        ) over (partition by repo_id, thread_number) as title,
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
    from chunked
),

-- content_hash covers every column but trust_tier (compared on its own: authority resolving
-- changes a tier, not a byte) and source_loaded_at
final as (
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
    from derived
)

select * from final
