{{ config(**signal_mart_config(['passage_index'], ['text_hash'])) }}

-- What the semantic tier embeds: for each live thread, its title before each of the first
-- relore_semantic_passages pieces of its opening post, cut on paragraph breaks at about
-- relore_semantic_passage_chars characters (relore_chunks, over each of the post's chunks in
-- turn): about what the encoder's 256-token window holds, so no part of a piece is cut off.
-- relored embed keys a vector by text_hash, the sha256 of exactly this text, so a passage
-- whose text did not change is never embedded again, and a thread ranks by its best
-- passage, whose document is what a semantic hit shows. Read from the redacted documents:
-- a secret never reaches a vector.
with

{{ signal_scope() }}

pieces as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        scoped_documents.document_id,
        scoped_documents.trust_tier,
        coalesce(scoped_documents.title, '') || E'\n' || piece.chunk as passage_text,
        row_number() over (
            partition by scoped_documents.repo_id, scoped_documents.thread_number
            order by scoped_documents.chunk_index, piece.chunk_index
        ) - 1 as passage_index
    from scoped_documents
    cross join
        lateral {{ relore_fn('chunks') }}(
            scoped_documents.body_text, {{ var('relore_semantic_passage_chars', 1000) }}
        ) as piece
    where scoped_documents.document_kind = 'opening_post'
),

passages as (
    select *
    from pieces
    where passage_index < {{ var('relore_semantic_passages', 4) }}
),

signals as (
    select
        passages.repo_id,
        passages.thread_number,
        passages.passage_index,
        passages.document_id,
        passages.trust_tier,
        passages.passage_text,
        encode(sha256(convert_to(passages.passage_text, 'UTF8')), 'hex') as text_hash,
        thread_loaded.loaded_at as source_loaded_at
    from passages
    inner join thread_loaded
        on
            passages.repo_id = thread_loaded.repo_id
            and passages.thread_number = thread_loaded.thread_number
    where btrim(passages.passage_text, E' \n\t') != ''
),

{{ replace_thread_sets(
    'signals', 'scope',
    ['passage_index', 'document_id', 'trust_tier', 'passage_text', 'text_hash']
) }}

select * from final
