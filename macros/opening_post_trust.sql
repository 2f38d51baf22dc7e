{#-
    The trust tier documents gave a thread's opening post (its first chunk), for the thread
    `alias` (repo_id, number): a one-row lateral subquery, one index lookup on documents'
    (repo_id, thread_number). No row when the thread has no opening post (deleted).
-#}
{% macro opening_post_trust(alias) -%}
    select opening_post.trust_tier
    from {{ ref('documents') }} as opening_post
    where
        opening_post.repo_id = {{ alias }}.repo_id
        and opening_post.thread_number = {{ alias }}.number
        and opening_post.document_kind = 'opening_post'
    order by opening_post.chunk_index
    limit 1
{%- endmacro %}
