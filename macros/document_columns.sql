{#-
    The columns of a document row, in mart order (keys first; is_deleted and
    source_loaded_at last): what int_documents_normalized derives and the documents mart
    stores (plus its search_vector). content_hash covers every one of them except trust_tier
    (compared on its own: authority resolving changes a tier, not a byte) and
    source_loaded_at.
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
    What documents_history records of each document: its keys, the columns a version is
    told apart by (content_hash, trust_tier, is_deleted) and the text. document_versions
    selects them (and written_at, the snapshot's scope); the snapshot records them.
-#}
{% macro document_version_columns() -%}
    {{ return([
        'repo_id', 'document_id', 'source_document_id', 'chunk_index', 'thread_number',
        'document_kind', 'author_login', 'trust_tier', 'content_hash', 'body_text', 'is_deleted',
        'source_loaded_at',
    ]) }}
{%- endmacro %}
