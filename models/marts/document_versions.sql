-- What documents_history (a dbt snapshot) records of each document: its identity, the
-- columns a version is told apart by, and the text. Ephemeral (no relation: the snapshot
-- inlines it), downstream of the mart it narrows.
{{ config(materialized='ephemeral') }}

with

documents as (
    select * from {{ ref('documents') }}
),

final as (
    select
        repo_id,
        document_id,
        source_document_id,
        chunk_index,
        thread_number,
        document_kind,
        author_login,
        trust_tier,
        content_hash,
        body_text,
        is_deleted,
        source_loaded_at
    from documents
)

select * from final
