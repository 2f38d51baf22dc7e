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
-- window partitioned by both, no aggregate or DISTINCT over thread-keyed rows, every input
-- read once (or `not materialized`); else an incremental build derives every thread.
--
-- On a full build every costly call (the redactions, the chunks, markdown_to_text, the
-- search vector) happens below the windows, in the parallel workers: above a window
-- Postgres runs everything in the leader alone. Keep them below, and keep every join
-- parallel-safe (a correlated subquery is not: machine accounts are joined as a set).
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

-- each listed login and the repositories it is a machine in, lower-cased ('' = all of them):
-- not thread-keyed, so aggregating it leaves the thread filter's pushdown alone
machine_logins as (
    select
        login,
        array_agg(lower(coalesce(repo, ''))) as repos
    from {{ ref('machine_accounts') }}
    group by login
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
            "'' = any(machine_logins.repos) or lower(heads.repo) = any(machine_logins.repos)",
            'permissions.has_write'
        ) }} as trust_tier,
        body.clean_markdown,
        anchor_path.redacted_path,
        anchor_hunk.redacted_diff_hunk
    from sources
    inner join issues as heads
        on
            sources.repo_id = heads.repo_id
            and sources.thread_number = heads.number
    left join permissions
        on
            sources.repo_id = permissions.repo_id
            and sources.author_login = permissions.login
    left join machine_logins on sources.author_login = machine_logins.login
    -- each redacted once, as a function in FROM: an expression in the select list is
    -- inlined into every use, and the body's three uses below called relore_redact three
    -- times (the body's redaction is most of a full build)
    cross join
        lateral {{ relore_fn('redact') }}(
            regexp_replace(replace(sources.body, chr(13), ''), '<!--.*?-->', '', 'g')
        ) as body (clean_markdown)
    cross join lateral {{ relore_fn('redact') }}(sources.path) as anchor_path (redacted_path)
    cross join lateral {{ relore_fn('redact') }}(sources.diff_hunk) as anchor_hunk (
        redacted_diff_hunk
    )
),

-- Every step here is a function in FROM, never a subquery: a lateral subquery takes its
-- outer row as a parameter, and Postgres runs no such plan in a parallel worker. And a
-- function in FROM is called once a row, where an expression in the select list is inlined
-- into every use of its column (the title's into the window and the search vector twice).
chunked as (
    select
        cleaned.*,
        cut.chunk_index,
        cut.chunk,
        coalesce(rejoined.body_text, text_form.body_text, '') as body_text,
        opening.opening_title,
        -- what a document says, for the search vector (the title's part is added above the
        -- window, on the one document that carries it)
        setweight(
            to_tsvector('english', coalesce(rejoined.body_text, text_form.body_text, '')), 'B'
        )
        || setweight(to_tsvector('simple', coalesce(cleaned.redacted_path, '')), 'C')
        -- the code a review comment is anchored to: its identifiers are how a reader names
        -- what was discussed (the hunk is stored redacted, as GitHub sent it)
        || setweight(to_tsvector('english', coalesce(cleaned.redacted_diff_hunk, '')), 'D')
            as body_vector
    from cleaned
    -- A blank body is no document, but an opening post with no body still carries its
    -- thread's title (the only document that does): one empty chunk, so a thread titled with
    -- its error stays findable.
    cross join
        lateral {{ relore_fn('chunks') }}(
            case
                when btrim(coalesce(cleaned.clean_markdown, '')) != '' then cleaned.clean_markdown
                when cleaned.document_kind = 'opening_post' then ''
            end,
            {{ var('relore_chunk_chars', 1500) }}
        ) as cut
    cross join lateral {{ relore_fn('markdown_to_text') }}(cut.chunk) as text_form (body_text)
    -- redacted again where markdown_to_text changed the chunk: removing tags, backticks and
    -- link targets can join what they split. An unchanged chunk is redacted text already,
    -- and relore_redact is strict: a null is no call.
    cross join
        lateral {{ relore_fn('redact') }}(
            nullif(text_form.body_text, cut.chunk)
        ) as rejoined (body_text)
    -- the thread's title, redacted once per thread: on its opening post's first chunk, which
    -- every thread has (null elsewhere: no call); the window below gives it to the thread's
    -- other documents
    cross join lateral {{ relore_fn('redact') }}(
        case
            when cleaned.document_kind = 'opening_post' and cut.chunk_index = 0
                then cleaned.unredacted_title
        end
    ) as opening (opening_title)
),

-- The windows: each document's chunk count, and the thread's title for every document of
-- the thread. Their partitions hold repo_id and thread_number, so the documents mart's
-- filter on them still passes (to a window's partition columns only) down to the staging
-- scans. Only cheap work is left above
-- it: that runs in the leader.
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
        max(opening_title) over (partition by repo_id, thread_number) as title,
        chunk as body_markdown,
        body_text,
        url,
        created_at,
        updated_at,
        redacted_path as path,
        line,
        original_line,
        start_line,
        side,
        commit_id,
        original_commit_id,
        redacted_diff_hunk as diff_hunk,
        in_reply_to_id,
        review_id,
        review_state,
        is_gone as is_deleted,
        source_loaded_at,
        -- the title is the thread's own words: only its opening post (first chunk) carries
        -- them, so a reply matches on what it says, never through the thread's title
        case
            when opening_title is not null
                then setweight(to_tsvector('english', opening_title), 'A') || body_vector
            else body_vector
        end as search_vector
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
        {%- endfor %},
        search_vector
    from derived
)

select * from final
