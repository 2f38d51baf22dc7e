-- Every thread's opening_post_trust is its opening post's tier in documents (null when it
-- has none): an incremental build that missed a re-tiered post leaves a row here.
select
    threads.repo_id,
    threads.number,
    threads.opening_post_trust,
    opening_post.trust_tier
from {{ ref('threads') }} as threads
left join {{ ref('documents') }} as opening_post
    on
        threads.repo_id = opening_post.repo_id
        and threads.number = opening_post.thread_number
        and opening_post.document_kind = 'opening_post'
        and opening_post.chunk_index = 0
where threads.opening_post_trust is distinct from opening_post.trust_tier
