{{ config(**signal_mart_config(['passage_index'], ['text_hash'])) }}

-- What the semantic tier embeds: for each live thread, its title before each of the first
-- relore_semantic_passages pieces of its opening post, cut on paragraph breaks at about
-- relore_semantic_passage_chars characters (relore_chunks, over each of the post's chunks in
-- turn): about what the encoder's 256-token window holds, so no part of a piece is cut off.
-- Then, for a pull request, the title before the first piece of each of its first
-- relore_semantic_turns later turns (comments, review bodies, review comments), oldest
-- first: a pull request's review turns describe its kind of change (the meaning leg reads
-- them for a change description and for precedent only: serve/semantic/nearest.py). An
-- issue's turns are not passages, nor are a bot's (the machine tier no search admits by
-- default). benchmarks/results/semantic-turns.md has the measurements behind each choice.
-- relored embed keys a vector by text_hash, the sha256 of exactly this text, so a passage
-- whose text did not change is never embedded again, and a thread ranks by its best
-- passage, whose document is what a semantic hit shows. Read from the redacted documents:
-- a secret never reaches a vector.
with

{{ signal_scope() }}

opening as (
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

turns as (
    select
        scoped_documents.repo_id,
        scoped_documents.thread_number,
        scoped_documents.document_id,
        scoped_documents.trust_tier,
        scoped_documents.body_text,
        scoped_documents.title,
        row_number() over (
            partition by scoped_documents.repo_id, scoped_documents.thread_number
            order by scoped_documents.created_at, scoped_documents.document_id
        ) as turn_index
    from scoped_documents
    where
        scoped_documents.document_kind in ('issue_comment', 'review', 'review_comment')
        and scoped_documents.chunk_index = 0
        and scoped_documents.trust_tier != 'machine'
        and scoped_documents.thread_kind = 'pr'
        and btrim(scoped_documents.body_text, E' \n\t') != ''
),

turn_pieces as (
    select
        turns.repo_id,
        turns.thread_number,
        turns.document_id,
        turns.trust_tier,
        coalesce(turns.title, '') || E'\n' || piece.chunk as passage_text,
        {{ var('relore_semantic_passages', 4) }} + turns.turn_index - 1 as passage_index
    from turns
    cross join
        lateral {{ relore_fn('chunks') }}(
            turns.body_text, {{ var('relore_semantic_passage_chars', 1000) }}
        ) as piece
    where
        piece.chunk_index = 0
        and turns.turn_index <= {{ var('relore_semantic_turns', 3) }}
),

passages as (
    select
        repo_id,
        thread_number,
        document_id,
        trust_tier,
        passage_text,
        passage_index
    from opening
    where passage_index < {{ var('relore_semantic_passages', 4) }}
    union all
    select
        repo_id,
        thread_number,
        document_id,
        trust_tier,
        passage_text,
        passage_index
    from turn_pieces
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
