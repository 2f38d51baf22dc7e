{{
    config(
        materialized='incremental',
        incremental_strategy='delete+insert',
        unique_key=['repo_id', 'document_id'],
        on_schema_change='fail',
        indexes=[
            {'columns': ['repo_id', 'document_id'], 'unique': True},
            {'columns': ['search_vector'], 'type': 'gin'},
            {'columns': ['repo_id', 'thread_number']},
        ],
    )
}}

with

documents as (
    select * from {{ ref('int_documents_normalized') }}
    {% if is_incremental() -%}
        where {{ incremental_window('source_loaded_at') }}
    {%- endif %}
),

{% if is_incremental() -%}
    changed as (
        select * from documents
        where
            not {{ unchanged_in_this(
                'documents',
                ['repo_id', 'document_id'],
                ['content_hash', 'trust_tier', 'is_deleted'],
            ) }}
    ),
{%- else -%}
    changed as (
        select * from documents
    ),
{%- endif %}

final as (
    select
        repo_id,
        repo,
        document_id,
        document_kind,
        source_id,
        chunk_index,
        thread_number,
        thread_kind,
        author_login,
        author_type,
        author_association,
        trust_tier,
        title,
        body_markdown,
        body_text,
        url,
        created_at,
        updated_at,
        content_hash,
        setweight(to_tsvector('english', coalesce(title, '')), 'A')
        || setweight(to_tsvector('english', body_text), 'B') as search_vector,
        is_deleted,
        source_loaded_at
    from changed
)

select * from final
