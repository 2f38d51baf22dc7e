{{ config(**signal_mart_config(['passage_index'], ['text_hash'])) }}

-- What the semantic tier embeds: for each live thread, its title before each of its opening
-- post's first relore_semantic_passages chunks (the documents' own chunks, cut on paragraph
-- breaks), one passage per chunk. relored embed keys a vector by text_hash, the sha256 of
-- exactly this text, so a passage whose text did not change is never embedded again, and a
-- thread ranks by its best passage, which is also the snippet a semantic hit shows. Read
-- from the redacted documents: a secret never reaches a vector.
with

{{ signal_scope() }}

passages as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        scoped_documents.chunk_index as passage_index,
        scoped_documents.document_id,
        scoped_documents.trust_tier,
        coalesce(scoped_documents.title, '') || E'\n' || scoped_documents.body_text as passage_text
    from scoped_documents
    where
        scoped_documents.document_kind = 'opening_post'
        and scoped_documents.chunk_index < {{ var('relore_semantic_passages', 4) }}
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
